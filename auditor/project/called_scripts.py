"""Lines that run another shell script of the tree (t19c, issue 15): Scaffold-GS's `train_mip360.sh` runs `./train.sh
-d mipnerf360/bicycle ... --gpu -1` once per scene, and `train.sh`'s own `python train.py ...` line fails at import on
Ascend (train.py reaches `diff_gaussian_rasterization`, a CUDA extension). The calling line starts that launch, so it
gets the called script's launch findings (auditor/project/launched.py, launch_imports.py: the findings whose data name
a `launched` file), one per calling line and category, the called line named in the message.

One level deep, as the other tree calls: the called script's launch findings come from the passes of
auditor/project/tree_calls.py run on it, never from the scripts it calls in turn. Two steps:
1. in the worker, the shell reader keeps each call of a script of the tree (`./train.sh`, `bash scripts/run.sh`,
   `source env.sh`) in the file's summary (`script_call`);
2. after the other tree passes, `apply_called_scripts` takes the called script's findings from the run or, for a
   script the run did not audit (the project-file bench audits one file at a time), from one analysis of it with those
   passes. Nothing is run.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from auditor.findings import FileResult, Finding
from auditor.project.launched import _MAX_SCRIPT_BYTES, launch_bases, resolve_launched
from auditor.project.makefile import _join, add_call_findings, positioned, recorded_calls, unsuppressed

SUMMARY_KEY = "called_scripts"
_SCRIPT_SUFFIXES = (".sh", ".bash")
_SOURCING = (".", "source")
_SHELLS = ("bash", "sh", "zsh", "dash")


def script_call(words: list[str], cwd: str | None) -> tuple[dict[str, Any], int] | None:
    """({"file": tree path relative to where the script started}, index of the word naming it) for a line that runs
    a shell script by its path: `./train.sh ...`, `scripts/eval.sh`, `bash train.sh`, `sh -x run.sh`, `source
    env.sh`. A bare `train.sh` is looked up on PATH, not in the current folder; an expansion or an absolute path is
    not a file of the tree."""
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    at = None
    if "/" in words[0] and name.endswith(_SCRIPT_SUFFIXES):
        at = 0
    elif name in _SHELLS + _SOURCING:
        # `bash -x train.sh`, `sh -e run.sh`: the first word that is not an option names the script
        at = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")), None)
        if at is not None and not words[at].endswith(_SCRIPT_SUFFIXES):
            at = None
    if at is None:
        return None
    word = words[at]
    if any(c in word for c in "$`{*?") or word.startswith(("/", "~")):
        return None
    path = _join("" if cwd is None or cwd.startswith("/") else cwd, word)
    return None if not path else ({"file": path}, at)


def _launch_findings(result: FileResult) -> list[Finding]:
    """The called script's launch findings (a `launched` file in their data), at most one per category, first
    line first."""
    out: dict[str, Finding] = {}
    for f in sorted(result.findings, key=lambda f: f.sort_key()):
        if isinstance(f.data, dict) and f.data.get("launched") and f.severity != "info":
            out.setdefault(f.category, f)
    return list(out.values())


def called_script_findings(result: FileResult, root: Path, product_findings: Callable[[str], list[Finding] | None],
                           cache: dict) -> list[Finding]:
    """The findings of `result`'s recorded calls of a script of the tree whose own lines launch a file that fails or
    picks a CUDA-only path on Ascend."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if not calls:
        return []
    bases = launch_bases(bases, root)
    new: list[Finding] = []
    for call_pos, rel in positioned(calls, "file"):
        found = resolve_launched(rel, bases, cache)
        if found is None:
            continue
        try:
            called = found[1].relative_to(root).as_posix()
        except ValueError:
            continue
        if called == result.path:
            continue           # a script that runs itself again (`exec ./run.sh` after an update)
        for f in product_findings(called) or []:
            line, col, end_col = call_pos
            chain = [f"{called}:{f.line}"] + list((f.data or {}).get("chain") or [])
            new.append(replace(
                f, path=result.path, line=line, col=col, end_line=line, end_col=end_col, fix="none",
                message=f"this line runs `{rel}`; at {called}:{f.line}, {f.message}",
                data={"launched": f.data["launched"], "called_script": called, "chain": chain}))
    return unsuppressed(new, calls, Path(result.path), root) if new else new


def apply_called_scripts(results: list[FileResult], root: Path, analyze: Callable[[], Callable[[bytes, str], FileResult]],
                         call_passes: Callable[[list[FileResult]], None]) -> None:
    """Add the launch findings of the scripts each file calls to the calling lines (tree_calls, after the other tree
    passes; `call_passes` runs those passes on a called script the run did not audit)."""
    if not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    top = root if root.is_dir() else root.parent
    # the run's own scripts as the other passes left them, before this pass adds to them: one level deep
    by_rel = {r.path: _launch_findings(r) for r in results}
    cache: dict = {}
    reader: list = []

    def findings_of(rel: str) -> list[Finding] | None:
        if rel in by_rel:
            return by_rel[rel]
        key = ("called", rel)
        if key not in cache:
            path = top / rel
            try:        # is_file: a FIFO or device named x.sh is refused, never opened
                ok = path.is_file() and path.stat().st_size <= _MAX_SCRIPT_BYTES
                data = path.read_bytes() if ok else None
            except OSError:
                data = None
            found = None
            if data is not None:
                if not reader:
                    reader.append(analyze())
                called = reader[0](data, rel)
                call_passes([called])
                found = _launch_findings(called)
            cache[key] = found
        return cache[key]
    add_call_findings(results, root, SUMMARY_KEY, lambda result, here: called_script_findings(result, here, findings_of,
                                                                                             cache))
