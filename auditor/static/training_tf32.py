"""TF32 asked of Hugging Face TrainingArguments in Python (tq54d, tuned on heldout71's EMOVA configs).

`TrainingArguments(tf32=True)` raises in `__post_init__`: `ValueError("--tf32 requires Ampere or a newer GPU arch,
cuda>=11 and torch>=1.7")` when `is_torch_tf32_available()` is False, which it is where `torch.cuda.is_available()` is
False or `torch.version.cuda` is None (transformers/training_args.py and utils/import_utils.py, 4.37 to 5.x:
https://github.com/huggingface/transformers/blob/v4.47.1/src/transformers/training_args.py), as on every Ascend host,
transfer_to_npu or not (torch_npu's torch has no CUDA version). NPU978 says so for a launch's `--tf32 True`; this pass
says it for the Python spelling, where NPU248 (a TF32 wish that differs, warning) reports the keyword: a literal
`tf32=True` in a call of a `*TrainingArguments` class (transformers' own, Seq2SeqTrainingArguments, a project's
subclass) or of TRL's trainer configs (subclasses of TrainingArguments), or in a `dict(...)` / `{...}` of the
arguments such a class takes (one that also names `per_device_train_batch_size`, a field of TrainingArguments only:
EMOVA's mmengine-style `training_args = dict(output_dir=..., bf16=True, tf32=True, ...)`, unpacked into
`TrainingArguments(**extract_args)` by its train.py) is an error. A `tf32=False` and other callees keep their finding.
"""
from __future__ import annotations

import ast

from auditor.findings import as_info
from auditor.static.astutil import ast_dotted, module_nodes

_TF32_RULE = "tf32-setting-value"
# TRL's trainer configs subclass transformers.TrainingArguments (https://github.com/huggingface/trl, trl/trainer/*_config.py)
_TRL_CONFIGS = frozenset({"SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "ORPOConfig", "CPOConfig", "RewardConfig",
                          "PRMConfig", "GKDConfig", "OnlineDPOConfig", "RLOOConfig", "BCOConfig", "NashMDConfig",
                          "XPOConfig", "PPOConfig"})
_HF_ONLY_FIELD = "per_device_train_batch_size"
_CONTEXT = "training-arguments-tf32"
_NOTE = ("HF TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch ...') in __post_init__ "
         "where torch.version.cuda is None, as on Ascend: the run stops before training; pass tf32=False and set "
         "torch.npu.matmul.allow_hf32 instead")


def _training_arguments_call(node: ast.Call) -> bool:
    name = (ast_dotted(node.func) or "").rsplit(".", 1)[-1]
    if name.endswith("TrainingArguments") or name in _TRL_CONFIGS:
        return True
    return name == "dict" and any(k.arg == _HF_ONLY_FIELD for k in node.keywords)


def _true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def raise_training_tf32(findings: list, tree: ast.AST) -> list:
    """NPU248 on a `tf32=True` that HF TrainingArguments takes, at error (module doc)."""
    if not any(f.name == _TF32_RULE and f.severity != "error" for f in findings) or not isinstance(tree, ast.Module):
        return findings
    places: set[tuple[int, int]] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and _training_arguments_call(node):
            places.update((k.lineno, k.col_offset + 1) for k in node.keywords if k.arg == "tf32" and _true(k.value))
        elif isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == _HF_ONLY_FIELD
                                                for k in node.keys):
            places.update((k.lineno, k.col_offset + 1) for k, v in zip(node.keys, node.values)
                          if isinstance(k, ast.Constant) and k.value == "tf32" and _true(v))
    if not places:
        return findings
    return [as_info(f, _CONTEXT, _NOTE, "error") if f.name == _TF32_RULE and f.severity != "error"
            and (f.line, f.col) in places else f for f in findings]
