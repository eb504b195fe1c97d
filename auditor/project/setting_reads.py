"""Config settings the tree's own Python decides on, read by how the code reads the key rather than by the key's name
(t23c, issue 15; lead decisions 7 and 17). Two shapes, both in YAML configs:

- **a device count the code reads by name** (`general.gpus: 1`, NPU028): DiGress's `main.py` reads
  `cfg.general.gpus` and picks the accelerator itself (`use_gpu = cfg.general.gpus > 0 and
  torch.cuda.is_available()`). The count is not a request to a scheduler or to Lightning; the Python line that picks
  is the finding (decision 17). A section handed whole to a library (`hydra.utils.instantiate(config.trainer)`,
  `Trainer(**cfg.trainer)`) keeps its finding: there the library reads the count (decision 7's second half).
  So does a trainer's `gpus:` count the code passes to the Trainer by name (OpenKiwi's `pl.Trainer(gpus=
  config.trainer.gpus)`,
  NPU020: the Trainer line is the pair, decision 26), and a `use_gpu: true` switch the tree's Python names (NPU028;
  the tree's own boolean device option, decision 47), t33b.
- **a choice nothing reads, in a section the code reads key by key** (V-Express's
  `solver.enable_xformers_memory_efficient_attention: True` beside `cfg.solver.mixed_precision` reads; PSHuman's yacs
  `DEVICE: cuda` beside `cfg.MODEL...` reads): no code and no library reads the key, so the line changes nothing
  (the session-18 labelling policy, "settings nothing reads"). The key must be named nowhere in the tree's Python
  except as an assignment target (`cfg.DEVICE = 'cuda'`, a default), two or more keys of its section must be read by
  name under the section's name, and the section must not be handed whole to anything. Top-level keys qualify only
  in upper case (yacs); lower-case top-level keys are how DeepSpeed, accelerate and HF TrainingArguments files are
  written, and those libraries read keys the tree never names. A tree that imports a framework building models from
  a whole config (detectron2, the mm* family) keeps these findings: the framework reads keys the tree never
  names (detectron2's `MODEL.DEVICE`).

Two readers decide before these tests (t25d): a tree built on LightningCLI hands every section to Lightning, so its
findings stay; Lightning's saved `hparams.yaml` (a run's record beside its checkpoints) loses its device-count and
accelerator findings, which no trainer reads.

Nothing is run. Each Python file's reads are a per-file fact (`setting_reads` in its summary, computed in the worker
from the tree the engine parsed and kept in the cache), so a warm run reads no Python file; a file of the tree the run
did not audit (the project-file bench audits one config at a time) is parsed here, once per tree and root, and only
when a config of the results has such a finding.
"""
from __future__ import annotations

import ast
import json
import os
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import yaml

from auditor.astnodes import module_nodes_of, scope_nodes, walk_list
from auditor.findings import FileResult, Finding, as_info

_CONFIG_SUFFIXES = (".yaml", ".yml")
# the configs whose settings this pass decides: YAML, and JSON (hifi-gan's `config.json`, pd37)
_DECIDED_SUFFIXES = _CONFIG_SUFFIXES + (".json",)
# CI files: their keys are read by the CI service (a reusable workflow's `with:` inputs), never by the tree's Python
# (also RunPod Hub's `.runpod/hub.json` / `tests.json`, read by the Hub when it builds and tests the endpoint; tp44a)
_CI_PARTS = (".github/", ".circleci/", ".gitlab-ci", ".buildkite/", "azure-pipelines", ".ci/", ".runpod/")
_COUNT_KEYS = frozenset({"gpus", "gpu_count", "gpucount"})   # NPU028's count patterns (rules/project_launch.yaml)
# NPU028's boolean GPU switch (`use_gpu: true`, a launcher's key): one the tree's own Python names is the tree's boolean
# device option, whose gated calls are the pairs (lead decision 47; OpenKiwi's `use_gpu: true`, a pydantic field)
_SWITCH_KEYS = frozenset({"use_gpu"})
# the keyword Lightning's `Trainer` / `Fabric` (and accelerate-style launchers) take a device count or list under, for
# whichever accelerator the call's `accelerator=` names: a count handed there picks no device itself (decision 26)
_DEVICE_COUNT_KEYWORD = "devices"
# the settings rules whose config findings name a choice (device, backend, attention switch); a count is NPU028's
_CHOICE_CODES = frozenset({"NPU019", "NPU020", "NPU122", "NPU363"})
# the codes whose settings this pass reads by their readers: the choices, the bf16 settings (NPU212, t25b) and the
# Apex switches (NPU318's `apex: true`, tp59a)
_READER_CODES = _CHOICE_CODES | {"NPU212", "NPU318"}
# calls that hand a config section whole to a library: Hydra's builders and Lightning's trainer constructors
_HANDOVER_CALLS = frozenset({"instantiate", "call", "Trainer", "from_argparse_args"})
# frameworks that build a model from a whole config and read its device / backend keys themselves (detectron2's
# `DefaultPredictor(cfg)` reads `cfg.MODEL.DEVICE`, which the tree never names: PDF-Extract-Kit's LayoutLMv3 config)
_CONFIG_FRAMEWORKS = frozenset({"detectron2", "maskrcnn_benchmark", "fvcore", "mmcv", "mmdet", "mmengine", "mmseg",
                                "mmdet3d", "yolox"})
# frameworks that load the option file themselves and read it by key in their own code (BasicSR's `train_pipeline`
# / `parse_options`: `init_dist(args.launcher, **opt['dist_params'])`, `build_model(opt)`; basicsr/utils/options.py):
# a tree that imports one from outside (DRCT's `from basicsr.train import train_pipeline`, `basicsr` a requirement)
# reads its options through code the tree does not hold. A tree holding the package (MambaIR's `basicsr/`) shows
# the reads in its own Python, so there the reads decide
_OPTION_FILE_FRAMEWORKS = frozenset({"basicsr"})
# LightningCLI (jsonargparse) builds the trainer, model and data from the config file's sections itself: a tree that
# subclasses or calls it hands every section whole to Lightning (pdearena's `class PDECLI(LightningCLI)`), and its
# `cli.trainer.fit(...)` / `cli.trainer.default_root_dir` reads are the Trainer object's attributes, not config reads
_WHOLE_CONFIG_CLIS = frozenset({"LightningCLI"})
# the file Lightning's loggers write beside checkpoints (`save_hyperparameters`): a saved run's record, read back by
# `load_from_checkpoint(hparams_file=...)` to build the model; no trainer reads its device counts or accelerator
_SAVED_HPARAMS = "hparams.yaml"
# the names Lightning's SaveConfigCallback and Hydra give a run's saved config (beside checkpoints: a run's record)
_SAVED_CONFIG_NAMES = frozenset({"config.yaml", "config.yml", "hparams.yaml"})
# boolean CUDA switches a library reads from the options it loads, with the library: (section, key) -> top module.
# bootstrap.pytorch moves the model with `if Options()['misc']['cuda']: model.cuda()` (bootstrap/models/factory.py):
# the calls it gates are the library's, so the switch is the tree's only line (t31a); in a tree that does not
# import the library, or that holds it, the calls are the tree's own and the key a boolean device option (decision 25)
_LIBRARY_SWITCHES = {("misc", "cuda"): "bootstrap"}
# device keys an imported simulator framework reads from the config the tree hands it (tp49a): Isaac Gym's task
# configs (IsaacGymEnvs / OmniIsaacGymEnvs `cfg/config.yaml`: `sim_device`, `rl_device`, `pipeline`, read by their
# `initialize_task` / `VecEnvRLGames` / `isaacgymenvs.make`, IsaacGymEnvs README "Configuration"); a tree that
# imports one of them keeps these findings, whoever reads the other keys
_LIBRARY_DEVICE_KEYS = {frozenset({"sim_device", "rl_device", "pipeline"}):
                        frozenset({"omniisaacgymenvs", "isaacgymenvs", "isaacgym"})}
_TRAINER_DEVICE_CODES = frozenset({"NPU020", "NPU028"})
_PICKED_CODES = frozenset({"NPU019", "NPU020"})     # a device / accelerator choice the code can pick itself
# folders a walk of the tree skips (environments, builds, VCS); also launched._holds_file_named
WALK_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", "site-packages", "build", "dist"})
_MAX_FILES = 4000
_MAX_BYTES = 512 * 1024


@dataclass
class _Reads:
    """How a tree's Python reads config keys."""
    under: set[tuple[str, str]] = field(default_factory=set)   # (section, key) read as `x.section.key`, `['s']['k']`
    named: set[str] = field(default_factory=set)     # every name or string read anywhere (not as an assignment target)
    handed: set[str] = field(default_factory=set)    # sections unpacked (`**cfg.trainer`) or passed to a builder
    imported: set[str] = field(default_factory=set)  # top-level modules imported
    # t24b: (section, key, keyword) for a read passed as a call's keyword (`mixed_precision=cfg.acceleration.mode`)
    passed: set[tuple[str, str, str]] = field(default_factory=set)
    # t24b: (name, keyword) for a name passed on under another keyword (`load_in_8bit=load_text_encoder_in_8bit`)
    forwards: set[tuple[str, str]] = field(default_factory=set)
    # pd37: (section, key) of a read passed under its own name to a trainer (`Trainer(accelerator=cfg.train.accelerator)`)
    to_trainer: set[tuple[str, str]] = field(default_factory=set)
    # pd47: (section, key) the code picks by the hardware: a string stored in every arm of an `if` chain on an
    # `is_available()` probe (foundry's `set_accelerator_based_on_availability` sets `cfg.trainer.accelerator`)
    picked: set[tuple[str, str]] = field(default_factory=set)
    # tq48a: (section, key, value) whose value the code takes only with CUDA present, else the CPU (`_fallback_keys`)
    fallback: set[tuple[str, str, str]] = field(default_factory=set)
    # tp51b: (section, key, keyword, text) for a read formatted into a string the code passes as a keyword
    # (`slurm_gres = f"gpu:{n},VRAM:{args.vram}"` then `update_parameters(slurm_gres=slurm_gres)`): the string's
    # text with `{}` where the read goes, `X` for its other fields (`_held_passes`)
    formatted: set[tuple[str, str, str, str]] = field(default_factory=set)
    # tp51b: string literals naming a config file by its path (`ex.add_config('cfgs/submit.yaml')`)
    config_paths: set[str] = field(default_factory=set)

    def add(self, other: "_Reads") -> None:
        self.under |= other.under
        self.named |= other.named
        self.handed |= other.handed
        self.imported |= other.imported
        self.passed |= other.passed
        self.forwards |= other.forwards
        self.to_trainer |= other.to_trainer
        self.picked |= other.picked
        self.fallback |= other.fallback
        self.formatted |= other.formatted
        self.config_paths |= other.config_paths


FACT = "setting_reads"      # the summary key of a Python file's reads (auditor/cache.py FACTS)
# a name or string that could be a config key (`enable_xformers_memory_efficient_attention`, `MODEL.DEVICE`): log
# messages and other prose are left out of the fact, which the cache keeps for every Python file
_KEY_LIKE_RE = re.compile(r"[A-Za-z_][\w.-]{0,63}")
# a relative path of a config file as code names it to load it (`cfgs/submit.yaml`, `./configs/base.yml`)
_CONFIG_PATH_RE = re.compile(r"(?:\./)?[\w.-]+(?:/[\w.-]+)*")
_CACHE: dict[tuple[str, str], tuple[tuple, list]] = {}    # (tree root, fact) -> (stats of the .py files read here, facts)


def _last_name(node: ast.expr) -> str | None:
    """`cfg.general` -> general, `trainer` -> trainer, `cfg["solver"]` -> solver, `config.get("params", {})` -> params
    (LDM / SGM's `instantiate_from_config` unpacks it into a library class: ComfyUI_StoryDiffusion)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _read_key(node: ast.expr) -> tuple[str, str] | None:
    """(section, key) of a read `cfg.section.key`, `cfg["section"]["key"]`, `cfg.section.get("key")`."""
    if isinstance(node, ast.Attribute):
        section = _last_name(node.value)
        return (section, node.attr) if section else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        section = _last_name(node.value)
        return (section, node.slice.value) if section else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        section = _last_name(node.func.value)
        return (section, node.args[0].value) if section else None
    return None


# the node types _read_file reads (a file's other nodes, most of them, are never looked at)
_READ_TYPES = (ast.Attribute, ast.Subscript, ast.Constant, ast.Name, ast.Import, ast.ImportFrom, ast.keyword, ast.Call,
               ast.Dict)


def _overwritten_reads(tree: ast.Module) -> set[int]:
    """Ids of the reads a constant stored earlier in the same function body decides (pd35): the DeiT / MAE / croco
    `init_distributed_mode(args)` sets `args.dist_backend = "nccl"` on its own level, then reads
    `backend=args.dist_backend`; the config's `dist_backend:` never reaches the read (CUT3R). Only stores on the
    function's own level count: one under an `if` or a loop may not run."""
    shadowed: set[int] = set()
    for func in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        fixed: set[tuple[str, str]] = set()
        for stmt in func.body:
            if fixed:
                for node in walk_list(stmt):
                    if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Load) \
                            and _read_key(node) in fixed:
                        shadowed.add(id(node))
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                fixed.update(k for k in map(_read_key, stmt.targets) if k)
    return shadowed | _own_literal_sections(tree)


def _own_literal_sections(tree: ast.Module) -> set[int]:
    """Ids of the reads of a section the file itself sets from a dict literal, and of that literal's keys (tp51b):
    Make-An-Audio's preprocess/mel_spec.py sets `args.dist_config = {"dist_backend": "nccl", ...}` on its own
    argparse namespace and reads `args.dist_config['dist_backend']`, so a config file's `dist_config.dist_backend`
    never reaches that read (decision 35: no code reads the key). Only a section every store of which in the file
    (`<name>.<section> = ...`) is such a literal; `h.dist_config[...]` of a loaded config is another name's read."""
    literal: dict[tuple[str, str], list[ast.Dict]] = {}
    other: set[tuple[str, str]] = set()
    for node in module_nodes_of(tree, ast.Assign):
        for target in node.targets:
            held = _read_key(target) if isinstance(target, ast.Attribute) else None
            if held is None:
                continue
            if isinstance(node.value, ast.Dict) and node.value.keys and all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.value.keys):
                literal.setdefault(held, []).append(node.value)
            else:
                other.add(held)
    own = {held: {str(k.value) for d in dicts for k in d.keys if isinstance(k, ast.Constant)}
           for held, dicts in literal.items() if held not in other}
    if not own:
        return set()
    shadowed = {id(k) for held in own for d in literal[held] for k in d.keys if k is not None}
    for node in module_nodes_of(tree, ast.Subscript):
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.slice, ast.Constant) and (read := _read_key(node.value)) is not None \
                and node.slice.value in own.get(read, ()):
            shadowed.update((id(node), id(node.value), id(node.slice)))
    return shadowed


def _overwriting_stores(body: list[ast.stmt]) -> set[tuple[str, str]]:
    """(section, key) an arm stores at its own level from a value that does not read the key itself (a string, or
    the ids the code found: LightAutoML's `self.nn_params["device"] = gpu_ids.split(",")`)."""
    out: set[tuple[str, str]] = set()
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            held = {k for k in map(_read_key, stmt.targets) if k}
            out |= held - {_read_key(n) for n in walk_list(stmt.value) if isinstance(n, (ast.Attribute, ast.Subscript))}
    return out


def _probe_names(tree: ast.Module) -> set[str]:
    """Names bound to a probe's answer (`gpu_cnt = torch.cuda.device_count()`), tested later as `gpu_cnt > 0`."""
    return {t.id for node in module_nodes_of(tree, (ast.Assign,)) if _probe(node.value)
            for t in node.targets if isinstance(t, ast.Name)}


def _picked_keys(tree: ast.Module) -> set[tuple[str, str]]:
    """(section, key) stored as a string in every arm of an `if` / `elif` / `else` chain that tests an
    `is_available()` probe (`if torch.cuda.is_available(): cfg.trainer.accelerator = "gpu"` ... `else: ... = "cpu"`,
    or one conditional expression on it):
    the code picks the value by the hardware it finds, so a config's value for the key never decides (pd47). tq52a:
    also a `device_count()` probe, held in a name first (`gpu_cnt = torch.cuda.device_count()`, `if gpu_cnt > 0:`),
    and stores of values the key does not feed (LightAutoML's presets: `self.nn_params["device"] =
    gpu_ids.split(",")` / `else: ... = "cpu"`)."""
    picked: set[tuple[str, str]] = set()
    held = _probe_names(tree)
    for node in module_nodes_of(tree, (ast.If,)):
        tests, arms, at = [], [], node
        while isinstance(at, ast.If):
            tests.append(at.test)
            arms.append(at.body)
            at = at.orelse[0] if len(at.orelse) == 1 and isinstance(at.orelse[0], ast.If) else at.orelse
        if not at or not any(_probe(t) or any(isinstance(n, ast.Name) and n.id in held for n in walk_list(t))
                             for t in tests):
            continue
        # tq52a: a store from any value the key does not feed (the devices found) overwrites the config's, too
        keys = _overwriting_stores(at)
        for arm in arms:
            keys &= _overwriting_stores(arm)
        picked |= keys
    for node in module_nodes_of(tree, (ast.Assign,)):     # `cfg.trainer.accelerator = "gpu" if <probe> else "cpu"`
        value = node.value
        if isinstance(value, ast.IfExp) and _probe(value.test) and all(
                isinstance(v, ast.Constant) and isinstance(v.value, str) for v in (value.body, value.orelse)):
            picked.update(k for k in map(_read_key, node.targets) if k)
    return {k for k in picked if k[0] not in _NOT_ROOTS}     # `self.device`: the object's own field, no config's


def _fallback_tests(tree: ast.Module) -> list[tuple[ast.expr, list[ast.stmt]]]:
    """The tests of `if` chains and conditional expressions that `and` a string comparison with an `is_available()`
    probe and end in an arm that does not raise (`if device == 'gpu' and torch.cuda.is_available(): ... else: cpu`),
    each with the chain's last arm."""
    found: list[tuple[ast.expr, list[ast.stmt]]] = []
    for node in module_nodes_of(tree, (ast.If, ast.IfExp)):
        last: list[ast.stmt]
        if isinstance(node, ast.IfExp):
            tests, last = [node.test], [ast.Expr(node.orelse)]
        else:
            tests, at = [], node
            while isinstance(at, ast.If):
                tests.append(at.test)
                at = at.orelse[0] if len(at.orelse) == 1 and isinstance(at.orelse[0], ast.If) else at.orelse
            last = at
        if last and not any(isinstance(n, ast.Raise) for s in last for n in walk_list(s)):
            found.extend((t, last) for t in tests if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And)
                         and any(map(_probe, t.values)))
    return found


def _compared_strings(test: ast.expr) -> list[tuple[ast.expr, str]]:
    """(operand, string) of the `x == "gpu"` comparisons an `and` test holds."""
    out = []
    for value in test.values if isinstance(test, ast.BoolOp) else ():
        if isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.Eq):
            left, right = value.left, value.comparators[0]
            for a, b in ((left, right), (right, left)):
                if isinstance(b, ast.Constant) and isinstance(b.value, str):
                    out.append((a, b.value))
    return out


def _fallback_keys(tree: ast.Module) -> set[tuple[str, str, str]]:
    """(section, key, value) of config reads whose value the code takes only with CUDA present and else falls back on
    (tq48a, heldout57's OpenOCR: `set_device(cfg['Global']['device'])` with `if device == 'gpu' and
    torch.cuda.is_available(): cuda:N` / `else: cpu`): the read compared in such a test, or passed to a function of
    the same file (a plain function, or a method called on `self`) whose parameter is. On Ascend the run goes on
    without the GPU: slower, not failing."""
    keys: set[tuple[str, str, str]] = set()
    tests = _fallback_tests(tree)
    if not tests:
        return keys
    compared: dict[int, list[tuple[str, str]]] = {}     # id of a function node -> [(parameter, value)]
    params: dict[str, list[tuple[ast.AST, list[str]]]] = {}
    owner: dict[int, ast.AST] = {}      # node id -> the innermost function holding it (outer ones come first)
    for func in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params.setdefault(func.name, []).append((func, [a.arg for a in func.args.posonlyargs + func.args.args]))
        owner.update((id(n), func) for n in scope_nodes(func))
    for test, _ in tests:
        for operand, value in _compared_strings(test):
            read = _read_key(operand)
            if read and read[0] not in _NOT_ROOTS:
                keys.add((*read, value))
            elif isinstance(operand, ast.Name) and id(test) in owner:
                compared.setdefault(id(owner[id(test)]), []).append((operand.id, value))
    if not compared:
        return keys
    for call in module_nodes_of(tree, (ast.Call,)):
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) and \
            isinstance(func.value, ast.Name) and func.value.id == "self" else None
        for target, names in params.get(name, ()) if name else ():
            if id(target) not in compared:
                continue
            names = names[1:] if isinstance(func, ast.Attribute) and names[:1] == ["self"] else names
            given = dict(zip(names, call.args)) | {kw.arg: kw.value for kw in call.keywords if kw.arg}
            for param, value in compared[id(target)]:
                read = _read_key(given[param]) if param in given else None
                if read and read[0] not in _NOT_ROOTS:
                    keys.add((*read, value))
    return keys


def _probe(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _PROBES
               for n in walk_list(test))


def _forwarding_calls(tree: ast.Module) -> set[int]:
    """Ids of calls to a callable the function was given or unpacked itself (`function, args = args;
    function(**args)`: dust3r's `starstarcall` map helper, pd35): such a call forwards whatever mapping it is handed,
    so its `**args` hands no config section to a library."""
    found: set[int] = set()
    for func in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        nodes = scope_nodes(func)
        local = {a.arg for a in func.args.args + func.args.posonlyargs + func.args.kwonlyargs}
        local |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        found.update(id(n) for n in nodes
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in local)
    return found


def _trainer_call(name: str) -> bool:
    """Lightning's `Trainer(...)` / `Fabric(...)` (and subclasses named `*Trainer`): they read their keywords as
    Lightning's own settings, whatever the config section the value came from is called."""
    return name in ("Trainer", "Fabric") or name.endswith("Trainer")


def _held_passes(tree: ast.Module, reads: _Reads) -> None:
    """Reads a function holds in a local name before passing it as a keyword (tp51b, trackformer's
    run_with_submitit.py: `num_gpus_per_node = args.num_gpus` ... `executor.update_parameters(gpus_per_node=
    num_gpus_per_node, slurm_gres=slurm_gres)` with `slurm_gres = f'gpu:{num_gpus_per_node},VRAM:{args.vram}'`):
    the read is passed as that keyword (`passed`), a read formatted into the held string with the string's text
    (`formatted`). Every binding of the name in the function counts (an `if` / `else` pair binds it twice)."""
    for func in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        nodes = scope_nodes(func)
        held: dict[str, list[ast.expr]] = {}
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                held.setdefault(node.targets[0].id, []).append(node.value)
        if not held:
            continue
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                if not (kw.arg and isinstance(kw.value, ast.Name)):
                    continue
                for value in held.get(kw.value.id, ()):
                    read = _read_key(value)
                    if read:
                        reads.passed.add((*read, kw.arg))
                    elif isinstance(value, ast.JoinedStr):
                        _formatted_reads(value, kw.arg, reads)


def _formatted_reads(node: ast.JoinedStr, keyword: str, reads: _Reads) -> None:
    """Each read among an f-string's fields, with the string's text (`{}` at the read, `X` at the other fields)."""
    fields = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    for at in fields:
        read = _read_key(at.value)
        if not read:
            continue
        text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" if v is at else "X" for v in node.values)
        if len(text) < 80:
            reads.formatted.add((*read, keyword, text))


def _read_file(tree: ast.Module, reads: _Reads) -> None:
    # one pass over the node list the file's other passes share (breadth-first: an assignment target comes before its
    # subscript, so `cfg['DEVICE'] = 'cuda'` skips the key it stores as well as the target)
    _held_passes(tree, reads)
    stored: set[int] = _overwritten_reads(tree)   # ids of subscripts of assignment targets, and of decided reads
    forwarding = _forwarding_calls(tree)
    for node in module_nodes_of(tree, _READ_TYPES):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node, ast.Subscript):
                stored.add(id(node.slice))
            continue
        if id(node) in stored:
            continue
        if isinstance(node, ast.Attribute):
            reads.named.add(node.attr)
            section = _last_name(node.value)
            if section:
                reads.under.add((section, node.attr))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            section = _last_name(node.value)
            if section:
                reads.under.add((section, node.slice.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 80:
            reads.named.add(node.value)
            if node.value.endswith(_DECIDED_SUFFIXES) and _CONFIG_PATH_RE.fullmatch(node.value):
                reads.config_paths.add(node.value)
        elif isinstance(node, ast.Name):
            reads.named.add(node.id)
        elif isinstance(node, ast.Import):
            reads.imported.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            reads.imported.add(node.module.split(".", 1)[0])
        elif isinstance(node, ast.keyword) and node.arg:
            reads.named.add(node.arg)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            for kw in node.keywords:
                if kw.arg and isinstance(kw.value, ast.Name) and kw.value.id != kw.arg:
                    reads.forwards.add((kw.value.id, kw.arg))
                elif kw.arg and isinstance(kw.value, (ast.Attribute, ast.Subscript, ast.Call)) \
                        and id(kw.value) not in stored:
                    read = _read_key(kw.value)
                    if read:
                        reads.passed.add((*read, kw.arg))
                        if read[1] == kw.arg and _trainer_call(name):
                            reads.to_trainer.add(read)
            if isinstance(func, ast.Attribute) and func.attr in ("get", "pop") and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                section = _last_name(func.value)     # `cfg.trainer.get("gpus")`
                if section:
                    reads.under.add((section, node.args[0].value))
            if name in _HANDOVER_CALLS or name.endswith("Trainer"):
                for arg in node.args[:1]:
                    section = _last_name(arg)
                    if section:
                        reads.handed.add(section)
            for kw in node.keywords if id(node) not in forwarding else ():
                if kw.arg is None:           # `**cfg.trainer`
                    section = _last_name(kw.value)
                    if section:
                        reads.handed.add(section)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if key is None:              # `{**cfg.trainer}`
                    section = _last_name(value)
                    if section:
                        reads.handed.add(section)


def reads_fact(tree: ast.AST | None) -> dict | None:
    """A Python file's reads as the summary keeps them (lists, JSON-ready); None when it has none or no tree."""
    if not isinstance(tree, ast.Module):
        return None
    reads = _Reads()
    _read_file(tree, reads)
    fact = {"under": sorted([s, k] for s, k in reads.under if _KEY_LIKE_RE.fullmatch(k)),
            "named": sorted(n for n in reads.named if _KEY_LIKE_RE.fullmatch(n)),
            "handed": sorted(reads.handed), "imported": sorted(reads.imported),
            "passed": sorted([s, k, w] for s, k, w in reads.passed if _KEY_LIKE_RE.fullmatch(k)),
            "forwards": sorted([n, w] for n, w in reads.forwards),
            "to_trainer": sorted([s, k] for s, k in reads.to_trainer if _KEY_LIKE_RE.fullmatch(k)),
            "picked": sorted([s, k] for s, k in _picked_keys(tree) if _KEY_LIKE_RE.fullmatch(k)),
            "fallback": sorted([s, k, v] for s, k, v in _fallback_keys(tree) if _KEY_LIKE_RE.fullmatch(k)),
            "formatted": sorted([s, k, w, t] for s, k, w, t in reads.formatted if _KEY_LIKE_RE.fullmatch(k)),
            "config_paths": sorted(reads.config_paths)}
    return {k: v for k, v in fact.items() if v} or None


def _from_fact(fact) -> _Reads | None:
    """The reads a summary holds, None when it holds none of the right shape."""
    if not isinstance(fact, dict):
        return None
    try:
        return _Reads(under={(str(s), str(k)) for s, k in fact.get("under") or []},
                      named={str(n) for n in fact.get("named") or []},
                      handed={str(n) for n in fact.get("handed") or []},
                      imported={str(n) for n in fact.get("imported") or []},
                      passed={(str(s), str(k), str(w)) for s, k, w in fact.get("passed") or []},
                      forwards={(str(n), str(w)) for n, w in fact.get("forwards") or []},
                      to_trainer={(str(s), str(k)) for s, k in fact.get("to_trainer") or []},
                      picked={(str(s), str(k)) for s, k in fact.get("picked") or []},
                      fallback={(str(s), str(k), str(v)) for s, k, v in fact.get("fallback") or []},
                      formatted={(str(s), str(k), str(w), str(t)) for s, k, w, t in fact.get("formatted") or []},
                      config_paths={str(p) for p in fact.get("config_paths") or []})
    except (TypeError, ValueError):
        return None


# The walks of one run of the tree passes (apply_tree_calls): three passes ask for the tree's Python files and the
# tree does not change under them, so one walk serves all; outside such a run every call walks again.
_RUN_WALKS: ContextVar[dict[str, list[tuple[Path, int, int]]] | None] = ContextVar("run_walks", default=None)


@contextmanager
def one_walk_per_run() -> Iterator[None]:
    """Within the block, python_files walks each tree once."""
    token = _RUN_WALKS.set({})
    try:
        yield
    finally:
        _RUN_WALKS.reset(token)


def python_files(top: Path) -> list[tuple[Path, int, int]]:
    """(path, mtime_ns, size) of the tree's Python files, skipped folders and files over _MAX_BYTES left out."""
    walks = _RUN_WALKS.get()
    if walks is not None and str(top) in walks:
        return walks[str(top)]
    out: list[tuple[Path, int, int]] = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in WALK_SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py") and len(out) < _MAX_FILES:
                path = Path(folder) / name
                try:
                    stat = path.stat()
                except OSError:
                    continue
                if stat.st_size <= _MAX_BYTES:
                    out.append((path, stat.st_mtime_ns, stat.st_size))
    if walks is not None:
        walks[str(top)] = out
    return out


def summarized_facts(top: Path, results: list[FileResult], key: str,
                     compute: Callable[[ast.AST], object]) -> list[tuple[str, object]]:
    """(rel, fact) of the tree's Python files that hold the per-file fact `key`: the run's own from their summaries (a
    warm run reads no Python file), the others parsed here with `compute`, again only when one changed (the bench asks
    once per config file, with only that file in `results`)."""
    out: list[tuple[str, object]] = []
    known: set[str] = set()
    for result in results:
        if result.path.endswith(".py"):
            known.add(os.path.normpath(top / result.path))
            fact = (result.summary or {}).get(key)
            if fact:
                out.append((result.path, fact))
    files = [f for f in python_files(top) if os.path.normpath(f[0]) not in known]
    stamp = tuple((str(p), m, n) for p, m, n in files)
    cached = _CACHE.get((str(top), key))
    if cached is None or cached[0] != stamp:
        parsed: list[tuple[str, object]] = []
        for path, _, _ in files:
            try:
                fact = compute(ast.parse(path.read_bytes()))
            except (OSError, SyntaxError, ValueError):
                continue
            if fact:
                parsed.append((path.relative_to(top).as_posix(), fact))
        cached = _CACHE[(str(top), key)] = (stamp, parsed)
    return out + cached[1]


def _tree_reads(top: Path, results: list[FileResult]) -> _Reads:
    """The reads of the tree's Python files (their `setting_reads` facts)."""
    reads = _Reads()
    for _, fact in summarized_facts(top, results, FACT, reads_fact):
        held = _from_fact(fact)
        if held is not None:
            reads.add(held)
    return reads


def _mapping_of(data, parts: list[str]) -> dict:
    """The mapping that holds `parts[-1]` in the loaded YAML (empty when the path leaves the YAML's mappings)."""
    for part in parts[:-1]:
        if not isinstance(data, dict):
            return {}
        data = next((v for k, v in data.items() if str(k) == part), None)
    return data if isinstance(data, dict) else {}


def _section_keys(data, parts: list[str]) -> list[str]:
    """The keys beside `parts[-1]` in the loaded YAML (the section's other keys)."""
    return [str(k) for k in _mapping_of(data, parts) if str(k) != parts[-1]]


def _class_paths(data) -> bool:
    """A LightningCLI / jsonargparse config (`class_path:` / `init_args:` anywhere): the CLI hands its sections to
    Lightning, which reads `trainer.precision` as the Trainer's argument (ModelGenerator's experiment configs), while
    the tree's `self.trainer.strategy` reads are the Trainer object's, not the config's."""
    if isinstance(data, dict):
        return "class_path" in data or any(_class_paths(v) for v in data.values())
    return isinstance(data, list) and any(_class_paths(v) for v in data)


def _library_target(mapping: dict, top: Path) -> bool:
    """A mapping Hydra builds into a class outside the tree (`_target_: pytorch_lightning.Trainer`: mattergen's
    trainer group, built by its own `maybe_instantiate` wrapper): the class reads the keys as its arguments."""
    target = mapping.get("_target_")
    if not isinstance(target, str) or not target.strip():
        return False
    first = target.strip().split(".", 1)[0]
    return not ((top / first).is_dir() or (top / f"{first}.py").is_file())


def _setting_path(finding: Finding) -> list[str] | None:
    path, sep, _ = (finding.symbol or "").partition(":")
    if not sep or not path or " " in path.strip():
        return None
    return path.strip().split(".")


def _candidate(finding: Finding) -> bool:
    """A finding of a shape this pass decides (checked before any file is read: a warm run reads nothing more for the
    others)."""
    parts = _setting_path(finding)
    if not parts:
        return False
    if finding.code == "NPU028":
        return parts[-1].lower() in _COUNT_KEYS | _SWITCH_KEYS
    return finding.code in _READER_CODES


def _decided_by_code(finding: Finding, rel: str, loaded, reads: _Reads, top: Path) -> bool:
    parts = _setting_path(finding)
    if not parts:
        return False
    key = parts[-1]
    library = _LIBRARY_SWITCHES.get((parts[-2], key)) if len(parts) > 1 else None
    if library is not None and finding.code == "NPU019":
        # the library's own tree (Cadene/bootstrap.pytorch) holds the gated calls: its Python findings carry them
        return library not in reads.imported or (top / library).is_dir()
    if any(key in keys and reads.imported & libraries for keys, libraries in _LIBRARY_DEVICE_KEYS.items()):
        return False
    # a top-level key of a Hydra group file sits under the group: the folder the file is in (`configs/general/`)
    sections = [parts[-2]] if len(parts) > 1 else [p for p in rel.split("/")[-2:-1]]
    if finding.code == "NPU028" and key.lower() in _SWITCH_KEYS:
        return key in reads.named
    if finding.code == "NPU028" and key.lower() in _COUNT_KEYS:
        # also a count the code passes as a device count (`Trainer(accelerator='gpu', devices=args.gpus)`: DiffSBDD's
        # train.py after merging the YAML into `args`, tp51b): the call's accelerator choice is the pair, the count
        # `none` (decision 26). A top-level key is read under whatever name the code merged the file into, one under
        # which the code reads two or more of the file's other keys
        if any((s, key) in reads.under and s not in reads.handed for s in sections):
            return True
        if len(parts) > 1 and _unnamed_section(parts, loaded, reads) and not reads.imported & _CONFIG_FRAMEWORKS:
            # a count in a section nothing opens, in a config the code reads key by key (DANCE's `misc.gpus: 1` beside
            # `conf.train.lr` reads, tp59b): no scheduler and no code reads it (decision 26, "settings nothing reads")
            return True
        siblings = [k for k in _section_keys(loaded, parts) if k != key] if len(parts) == 1 else []
        return any(k == key and w == _DEVICE_COUNT_KEYWORD and s not in reads.handed and (
            s in sections or sum((s, other) in reads.under for other in siblings) >= 2) for s, k, w in reads.passed)
    if finding.code == "NPU020" and key.lower() in _COUNT_KEYS and not reads.named & _WHOLE_CONFIG_CLIS:
        # a trainer's `gpus:` count the code passes to the Trainer by name (OpenKiwi's `pl.Trainer(gpus=
        # config.trainer.gpus)`): that line picks the accelerator, the count is `none` (decisions 17 / 26, t33b). A
        # section handed whole (`Trainer(**cfg.trainer.kwargs)`, `instantiate(cfg.trainer)`), or one the code only
        # counts with (latent-diffusion's `len(lightning_config.trainer.gpus...)` beside `Trainer(**trainer_config)`),
        # keeps it
        return any((s, key) in reads.to_trainer and s not in reads.handed for s in sections)
    if finding.code in _PICKED_CODES and any((s, key) in reads.picked for s in sections):
        return True     # the code stores the key by the hardware it finds (`_picked_keys`) before the reads
    if finding.code not in _READER_CODES or any((s, key) in reads.under for s in sections) \
            or reads.imported & _CONFIG_FRAMEWORKS or reads.named & _WHOLE_CONFIG_CLIS:
        return False
    if any(not (top / name).is_dir() for name in reads.imported & _OPTION_FILE_FRAMEWORKS):
        return False
    siblings = _section_keys(loaded, parts)
    if _library_target(_mapping_of(loaded, parts), top) or _class_paths(loaded):
        return False
    if len(parts) > 1 and finding.code in _CHOICE_CODES and _unnamed_section(parts, loaded, reads):
        return True
    if finding.code in _CHOICE_CODES and key not in reads.named and _unbuilt_target(parts, loaded, reads, top):
        return True
    if len(parts) == 1 and not key.isupper():
        # by its readers, not by "named nowhere": a lower-case key (`device`) is also every object's attribute name.
        # Outside Hydra only when a reader reads the config key by key (four keys and half of them or more:
        # StyleTTS2's `config.get(...)` of every key but `device`, t36b); the other keys of a DeepSpeed / accelerate
        # file, of which the tree reads one or two, are its library's
        key_by_key = max(_KEY_BY_KEY_READS, len(siblings) // 2)
        return _unread_by_readers(key, siblings, reads, min_reads=2 if _hydra_config(loaded) else key_by_key)
    if finding.code in _CHOICE_CODES and key not in reads.named:
        if len(parts) == 1:
            return sum(k.isupper() and k in reads.named for k in siblings) >= 2
        return parts[-2] not in reads.handed and sum((parts[-2], k) in reads.under for k in siblings) >= 2
    # a key named somewhere (`precision`, read as `config.train.precision`): its own section's readers decide
    return len(parts) > 1 and _unread_by_readers(key, siblings, reads, parts[-2])


_FALLBACK_NOTE = ("the tree's code takes this value only when `torch.cuda.is_available()`, and else runs on the CPU: "
                  "on Ascend it runs, slower, until the device choice names the NPU")


def _falls_back(finding: Finding, rel: str, reads: _Reads) -> bool:
    """A device / accelerator choice whose value the code compares beside a CUDA probe with a CPU arm
    (`_fallback_keys`)."""
    parts = _setting_path(finding)
    if finding.code not in _PICKED_CODES or not parts:
        return False
    value = (finding.symbol or "").partition(":")[2].strip().strip("'\"").lower()
    sections = [parts[-2]] if len(parts) > 1 else rel.split("/")[-2:-1]
    return any(s in sections and k == parts[-1] and v.lower() == value for s, k, v in reads.fallback)


def _unbuilt_target(parts: list[str], loaded, reads: _Reads, top: Path) -> bool:
    """The key's nearest `target:` (ldm / sgm configs: `network_config: {target: sgm.modules...UNetModel, params:
    {spatial_transformer_attn_type: softmax-xformers}}`) names a package the tree neither holds nor imports, and no
    code of the tree reads a `target` key (`config["target"]`, `config.target`: an `instantiate_from_config` of its
    own): nothing builds the class, so nothing reads its settings (dream-textures' `sd_configs/sd_xl_*.yaml`, handed
    to diffusers' checkpoint conversion, which reads shapes only; pd40). A tree that imports sgm or holds ldm keeps it."""
    if any(k == "target" for _, k in reads.under):
        return False
    for depth in range(len(parts) - 1, 0, -1):
        target = _mapping_of(loaded, parts[:depth] + ["target"]).get("target")
        if isinstance(target, str) and "." in target.strip():
            first = target.strip().split(".", 1)[0]
            return first not in reads.imported and not ((top / first).is_dir() or (top / f"{first}.py").is_file())
    return False


def _unnamed_section(parts: list[str], loaded, reads: _Reads) -> bool:
    """A nested key that neither it nor its top section is named anywhere in the tree's Python, in a config the tree
    reads key by key (some name reads two of its top keys) and hands to no builder (`_target_`): hifi-gan's
    `dist_config.dist_backend` in a copy whose code only builds the generator from the file (`h.upsample_rates`,
    ...: FreeVC, ppg-vc; knn-vc's train.py reads `h.dist_config['dist_backend']` and keeps it), pd37. Nothing in the
    tree opens the section, and a library could only reach it through a whole config handed over by name."""
    if parts[0] in reads.named or parts[-1] in reads.named or not isinstance(loaded, dict) or "_target_" in loaded:
        return False
    siblings = _section_keys(loaded, parts[:1])
    names = {s for s, k in reads.under if k in siblings and s not in _NOT_ROOTS and s not in siblings}
    return any(sum((r, k) in reads.under for k in siblings) >= 2 for r in names)


# the keys a reader reads of a config without Hydra marks before its unread top-level keys count as unread (t36b)
_KEY_BY_KEY_READS = 4
# names that hold an object's own attributes, never a loaded config: `self.device` is the object's field
_NOT_ROOTS = frozenset({"self", "cls", "super"})
# the hardware probes whose answer picks a device: `torch.cuda.is_available()`, `torch.cuda.device_count()` (tq52a)
_PROBES = frozenset({"is_available", "device_count"})


def _hydra_config(loaded) -> bool:
    """A Hydra / OmegaConf config: a defaults list, a `hydra:` section, a `_target_` or an `${...}` interpolation.
    DeepSpeed, accelerate and HF TrainingArguments files (whose libraries read keys the tree never names) have none."""
    if not isinstance(loaded, dict):
        return False
    if any(str(k) in ("defaults", "hydra", "_target_") for k in loaded):
        return True
    return any(isinstance(v, str) and "${" in v for v in loaded.values())


def _unread_by_readers(key: str, siblings: list[str], reads: _Reads, section: str | None = None,
                       min_reads: int = 2) -> bool:
    """A key its mapping's readers never read (t25b): a reader is a name under which the tree reads two or more of the
    key's siblings (`cfg.gpu_id`, `cfg.get("seed")`: the config's root; `config.save.name`: the section `save`, or an
    alias of it); none reads the key (`cfg.device`, `cfg["device"]`, `args.device` after a merge keep the finding)
    and none is handed whole to a builder (`instantiate(cfg)`, `**cfg`). open-pi-zero's top-level `device: cuda`;
    sliders' `save.precision`, read under `train` only. A nested key needs its own section among the readers; a
    reader reads `min_reads` of the siblings or more."""
    # a name that is itself one of the mapping's keys is a section (`self.data.device` is a tensor's, under `data`)
    names = {s for s, k in reads.under if k in siblings and s not in _NOT_ROOTS and s not in siblings}
    readers = {r for r in names if sum((r, k) in reads.under for k in siblings) >= min_reads}
    if not readers or (section is not None and section not in readers):
        return False
    return not any((r, key) in reads.under or r in reads.handed for r in readers)


def _saved_run_config(path: Path) -> bool:
    """A run's record rather than a config a run starts from (pd35): Lightning's `hparams.yaml`, Hydra's
    `.hydra/config.yaml`, or a config saved beside a run's checkpoints (a `checkpoints/` folder or `*.ckpt` files
    next to it: mattergen's released `checkpoints/<model>/config.yaml`, loaded back for the model only). No trainer
    reads its device counts or accelerator."""
    if path.name == _SAVED_HPARAMS or path.parent.name == ".hydra":
        return True
    if path.name not in _SAVED_CONFIG_NAMES:
        return False
    folder = path.parent
    try:
        return (folder / "checkpoints").is_dir() or any(folder.glob("*.ckpt"))
    except OSError:
        return False


def drop_code_read_settings(results: list[FileResult], root: Path) -> None:
    """Drop the config findings whose setting the tree's own code decides on, or that nothing reads (module doc)."""
    top = (root if root.is_dir() else root.parent).resolve()
    reads: _Reads | None = None
    for result in results:
        if not result.path.endswith(_DECIDED_SUFFIXES) or any(p in result.path.replace("\\", "/") for p in _CI_PARTS):
            continue
        path = Path(result.path)
        path = path if path.is_absolute() else top / path
        if _saved_run_config(path):
            result.findings = [f for f in result.findings if f.code not in _TRAINER_DEVICE_CODES]
            continue
        candidates = [f for f in result.findings if _candidate(f)]
        if not candidates:
            continue
        try:
            rel = path.resolve().relative_to(top).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            loaded = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if reads is None:
            reads = _tree_reads(top, results)
        dropped = {id(f) for f in candidates if _decided_by_code(f, rel, loaded, reads, top)}
        if dropped:
            result.findings = [f for f in result.findings if id(f) not in dropped]
        if reads.fallback:
            result.findings = [as_info(f, "cpu-fallback", _FALLBACK_NOTE, severity="warning")
                               if f.severity == "error" and _falls_back(f, rel, reads) else f
                               for f in result.findings]


tree_reads = _tree_reads     # the tree's reads for auditor/project/setting_keywords.py (t24b)
