"""Another vendor's "NPU" is not Ascend (issue 11, t11i, tuned on heldout7; policy (d2) in docs/precision.md).

The word `npu` in a path (`transformers/npu_models/`, `example/NPU/`, `npu_model.py`) reads as Ascend elsewhere in
the tool. Intel's NPU (Core Ultra's AI Boost) is driven through intel_npu_acceleration_library: ipex-llm's
`npu_models/*_mp.py` build its graphs (`NNFactory`) from host weights (`weight.to(torch.float16)`), and scripts load
models through `ipex_llm.transformers.npu_model` on the host. Like OpenVINO's code (d2), that code is another
backend's, and its PyTorch side holds host values.

Structure read (per run, from the import facts each file's summary already holds; no file is read again):

- a Python file that imports a runtime of another vendor's NPU (`intel_npu_acceleration_library`; the list names
  runtimes, backend_words.OTHER_NPU_RUNTIMES) is that NPU's code, and so is every file of the folder named for
  `npu` that holds it (`npu_models/`, the nearest such folder above it) and a module named for npu that imports
  one (`npu_model.py`);
- a file that imports such a module at load time (`from ipex_llm.transformers.npu_model import
  AutoModelForCausalLM`) is that NPU's code too.

There the hints about device work on host values (categories performance, precision, operator: syncs, dtype
facts, op support) are dropped (policy (e)), and other errors and warnings are info ("in code for another
backend"), never rewritten, as in a file whose path names another backend.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from auditor.backend_words import OTHER_NPU_RUNTIMES, backends_in_text
from auditor.static.backends import _NOTES, discount_owned, undiscounted

_HOST_HINT_CATEGORIES = frozenset({"performance", "precision", "operator"})


def _names_npu(part: str) -> bool:
    return "npu" in backends_in_text(part)


def _npu_scope(rel: str) -> str | None:
    """The nearest folder of `rel` named for npu (`.../npu_models`), or the file itself when its stem is."""
    parts = rel.split("/")
    for i in range(len(parts) - 1, 0, -1):
        if _names_npu(parts[i - 1]):
            return "/".join(parts[:i])
    return rel if _names_npu(parts[-1].rsplit(".", 1)[0]) else None


def other_npu_files(files: Sequence[tuple[Path, str]], project) -> dict[str, str]:
    """{rel: the runtime import that makes it another vendor's NPU code}."""
    from auditor.static.module_paths import absolute_dotted

    direct: dict[str, str] = {}
    scopes: dict[str, str] = {}
    loads: dict[str, list] = {}
    for _path, rel in files:
        if not rel.endswith(".py"):
            continue
        facts = project.facts(rel) or {}
        load = facts.get("load") or []
        loads[rel] = load
        runtime = next((m for m, _n, _lt in load if m.split(".", 1)[0] in OTHER_NPU_RUNTIMES), None)
        if runtime is None:
            continue
        scope = _npu_scope(rel)
        if scope is not None:
            scopes.setdefault(scope, runtime)
        if scope == rel or any(lt for m, _n, lt in load if m.split(".", 1)[0] in OTHER_NPU_RUNTIMES):
            direct[rel] = runtime
    if not direct and not scopes:
        return {}
    out = dict(direct)
    for rel in loads:
        hit = next((s for s in scopes if rel == s or rel.startswith(s + "/")), None)
        if hit is not None:
            out.setdefault(rel, scopes[hit])
    names = project.module_names()
    rel_of = {name: rel for rel, name in names.items()}
    npu_modules = {name for name, rel in rel_of.items() if rel in out and _npu_scope(rel) is not None}
    for rel, load in loads.items():
        if rel in out:
            continue
        me = names.get(rel, "")
        for module, imported, load_time in load:
            if not load_time:
                continue
            target = absolute_dotted(module, me, rel.endswith("__init__.py")) if me else module
            if target in npu_modules or any(f"{target}.{n}" in npu_modules for n in imported):
                out[rel] = f"{target} ({rel_of.get(target) or target})"
                break
    return out


def apply_other_npu(results: list, files: Sequence[tuple[Path, str]], project) -> int:
    """Drop host-value hints and make other findings info in another vendor's NPU code; returns how many changed."""
    if not any(r.findings and r.path.endswith(".py") for r in results):
        return 0
    return discount_owned(
        results, other_npu_files(files, project),
        lambda via: f"another vendor's NPU, not Ascend (it imports {via}): {_NOTES['other-backend']}",
        lower=undiscounted, drop=lambda f: f.category in _HOST_HINT_CATEGORIES)
