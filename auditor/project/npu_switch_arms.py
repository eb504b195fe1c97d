"""Flash-attention / xformers switches the tree's own code already takes care of on Ascend (tq54e, issue 11; tuned on
heldout71's MagicDriveDiT). NPU357 reports a switch that turns a flash-attention / xformers path on
(`enable_flash_attn=True` in a model config) because that path imports flash_attn / xformers. Two shapes of a tree
that already runs on the NPU make the switch harmless there:

- **the switched path has an NPU arm**: the code the switch selects routes to torch_npu itself

      if enable_flash_attn:
          if USE_NPU:
              x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", ...)[0]
          else:
              x = flash_attn_func(q, k, v, ...)

  (MagicDriveDiT's `magicdrivedit/models/layers/blocks.py`, an Open-Sora STDiT3 with torch_npu arms);
- **the tree switches it off on the NPU**: its scripts set the switch False under an NPU test

      if USE_NPU:  # disable some kernels
          if mmengine_conf_get(cfg, "model.frame_emb_param.enable_xformers", None):
              mmengine_conf_set(cfg, "model.frame_emb_param.enable_xformers", False)

Every NPU357 finding of such a switch name in the tree (its configs, the model's own `self.enable_flash_attn = ...`)
is then info (context `npu-path`, never rewritten): nothing is left to switch off or route (the severity policy's
rule for ported code). Each Python file's switch names are a per-file fact (`npu_switches` in its summary), so a warm
run reads no Python file. Nothing is run.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from auditor.astnodes import ast_dotted, module_nodes_of, walk_list
from auditor.backend_words import backends_in_expression
from auditor.findings import FileResult, lower_findings

FACT = "npu_switches"     # the summary key of a Python file's switch names (auditor/cache.py FACTS)
_RULE = "flash-attention-switch"      # NPU357 (rules/settings.yaml)
# the names NPU357's switches take: `enable_flash_attn`, `use_xformers`, `use_memory_efficient_attention`
_SWITCH = re.compile(r"(?i)flash|xformers|mem(?:ory)?_efficient")
_NOTE = ("the tree's own code already takes care of this switch on the NPU: the path it selects has a torch_npu arm, "
         "or the tree switches it off there; nothing to port")


def _switch_name(node: ast.AST) -> str | None:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name if name is not None and _SWITCH.search(name) else None


def _tested_switches(test: ast.expr) -> set[str]:
    """The switch names a test turns on by (`if enable_flash_attn:`, `if self.enable_flash_attn or x:`); a negated
    test (`if not enable_flash_attn:`) selects the other path."""
    if isinstance(test, ast.BoolOp):
        return set().union(*(_tested_switches(v) for v in test.values))
    name = _switch_name(test)
    return {name} if name else set()


def _npu_test(test: ast.expr) -> bool:
    """`if USE_NPU:`, `if is_npu_available():`, `if device.type == "npu":` (not a negated one)."""
    return not isinstance(test, ast.UnaryOp) and backends_in_expression(test) == {"npu"}


def _npu_arm(node: ast.If) -> bool:
    """An NPU test whose body calls torch_npu (`torch_npu.npu_fusion_attention(...)`)."""
    return _npu_test(node.test) and any(
        isinstance(n, ast.Call) and (ast_dotted(n.func) or "").startswith(("torch_npu.", "torch.npu."))
        for stmt in node.body for n in ast.walk(stmt))


def _switched_off(stmt: ast.AST) -> set[str]:
    """Switch names a statement sets False: `cfg.x.enable_xformers = False`, `conf_set(cfg, "a.enable_xformers",
    False)`."""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is False:
        return {n for n in (_switch_name(t) for t in stmt.targets) if n}
    if isinstance(stmt, ast.Call) and any(isinstance(a, ast.Constant) and a.value is False for a in stmt.args):
        return {key for a in stmt.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                for key in [a.value.rsplit(".", 1)[-1]] if _SWITCH.search(key) and key.isidentifier()}
    return set()


def npu_switch_fact(tree: ast.AST | None) -> list[str] | None:
    """The switch names a Python file routes to the NPU or switches off there, or None."""
    if tree is None:
        return None
    ifs = module_nodes_of(tree, ast.If)
    if not ifs:
        return None
    names: set[str] = set()
    for node in ifs:
        if _npu_test(node.test):
            for stmt in node.body:
                for n in walk_list(stmt):
                    names |= _switched_off(n)
        switches = _tested_switches(node.test)
        if switches and any(isinstance(n, ast.If) and _npu_arm(n) for stmt in node.body for n in walk_list(stmt)):
            names |= switches
    return sorted(names) or None


def apply_npu_switch_arms(results: list[FileResult], root: Path) -> int:
    """Lower NPU357 findings of the switch names the tree handles on the NPU to info; returns how many."""
    if not any(f.name == _RULE and f.severity != "info" for r in results for f in r.findings):
        return 0
    from auditor.project.setting_reads import summarized_facts

    handled = {str(name) for _, fact in summarized_facts(root, results, FACT, npu_switch_fact)
               if isinstance(fact, list) for name in fact}
    if not handled:
        return 0
    def why(f) -> tuple[str, str] | None:
        return ("npu-path", _NOTE) if f.name == _RULE and f.severity != "info" and not f.data.get("context") and \
            (f.symbol or "").rsplit(".", 1)[-1] in handled else None
    return sum(lower_findings(result, why) for result in results)
