"""Launch lines that run an attention wrapper of the tree (t15k, issue 15): FastChat's `train_mem.py` and its many
copies (LLaVA, Video-LLaVA, ShareGPT4V, MoE-LLaVA ...) are a few lines that patch FlashAttention or xFormers into the
model and then call the project's `train()`; a script picks the CUDA attention by launching that wrapper instead of
`train.py` (`deepspeed videollava/train/train_mem.py ...`). The same two steps as `make` and `cmake` calls
(auditor/project/makefile.py, cmake_calls.py), because the wrapper is another file of the tree:

1. the shell reader records the Python file a launch line runs (`python x.py`, `torchrun ... x.py`, `deepspeed x.py`,
   `accelerate launch x.py`) with its folder in the file's summary (`launched_scripts`);
2. after every file is read, `apply_launched_wrappers` reads that file (from the tree's root, then from the calling
   file's folder) and reports the launch line when the file is a wrapper: short (at most WRAPPER_LINES lines of
   code) with an attention finding that is not information. A long training script with a FlashAttention path is
   not reported here: its own lines are where the port happens. Nothing is run.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from auditor.findings import FileResult, Finding
from auditor.project.makefile import _join, add_call_findings, call_finding, recorded_calls, unsuppressed

SUMMARY_KEY = "launched_scripts"
WRAPPER_LINES = 30
_MAX_BYTES = 64 * 1024


def launched_call(words: list[str], cwd: str | None) -> dict[str, Any] | None:
    """The `.py` file a launch runs (the words after the launcher), relative to where the script started; after a
    `cd` to an absolute or unknown folder (`cd /path/to/Video-LLaVA`), relative to the tree's root."""
    if cwd is None or cwd.startswith("/"):
        cwd = ""
    for i, w in enumerate(words):
        if w == "-m" or w == "-c":
            return None                   # a module or a program text: not a file of the tree by path
        if w.endswith(".py") and not w.startswith("-") and "=" not in w:
            if "$" in w or "{" in w or "%" in w or w.startswith(("/", "~")):
                return None
            path = _join(cwd, w)
            return None if path is None else {"file": path}
    return None


def _code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def wrapper_fact(data: bytes, findings) -> bool:
    """A Python file that is a wrapper when launched: short (at most _MAX_BYTES, WRAPPER_LINES lines of code) with an
    attention finding that is not information. Its per-file fact (`wrapper` in the worker's tree facts,
    project_imports.with_facts), so that the pass below reads no file the worker has read."""
    return (_attention_hit(findings) is not None and len(data) <= _MAX_BYTES
            and _code_lines(data.decode("utf-8", errors="replace")) <= WRAPPER_LINES)


def _attention_hit(findings) -> Finding | None:
    hits = [f for f in findings if f.category == "attention" and f.severity != "info"]
    return min(hits, key=lambda f: f.line) if hits else None


def _wrapper_finding(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                     known: FileResult | None = None) -> Finding | None:
    """The first attention finding (error or warning) of a short Python file, or None. `known`: the worker's result
    for the file (a file of the tree), whose own findings and `wrapper` fact are used instead of reading it again."""
    key = str(path)
    if key in cache:
        return cache[key]
    facts = known.summary.get("tree") if known is not None and known.summary else None
    if known is not None and isinstance(facts, dict):
        found = _attention_hit(known.findings) if facts.get("wrapper") else None
        cache[key] = found
        return found
    found = None
    try:        # is_file: a FIFO or device named x.py is refused, never opened
        if path.is_file() and path.stat().st_size <= _MAX_BYTES:
            data = path.read_bytes()
            if _code_lines(data.decode("utf-8", errors="replace")) <= WRAPPER_LINES:
                found = _attention_hit(analyze(data, rel).findings)
    except OSError:
        found = None
    cache[key] = found
    return found


def launched_wrapper_findings(result: FileResult, root: Path, rule, analyze: Callable[[bytes, str], FileResult],
                              cache: dict | None = None, product: str = "a2",
                              by_rel: dict[str, FileResult] | None = None) -> list[Finding]:
    """The findings of `result`'s recorded launches of an attention wrapper of the tree (`by_rel`: the run's
    results by path relative to `root`, whose per-file facts spare reading the wrapper again)."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if rule is None or not calls:
        return []
    cache = {} if cache is None else cache
    new = []
    for call in calls:
        try:
            line, col, end_col, rel = call["line"], call["col"], call["end_col"], call["file"]
        except (KeyError, TypeError):
            continue
        why = None
        for base in bases:
            candidate = base / rel
            if candidate.is_file():
                known = None
                if by_rel:
                    try:
                        known = by_rel.get(candidate.relative_to(root).as_posix())
                    except ValueError:
                        known = None
                why = _wrapper_finding(candidate, rel, cache, analyze, known)
                break
        if why is None:
            continue
        message = rule.message.replace("{symbol}", rel) + f" ({rel}:{why.line}: `{why.symbol}`, {why.code})"
        new.append(call_finding(rule, product, result, (line, col, end_col), message, rel,
                                {"launched": rel, "line": why.line, "code": why.code}))
    if new:
        return unsuppressed(new, calls, Path(result.path), root)
    return new


def apply_launched_wrappers(results: list[FileResult], root: Path, rules,
                            analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add the launch findings to every file that recorded launches (runner, after the per-file pass)."""
    rule = next((r for r in rules if "launched" in r.match), None)
    if rule is None or not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    reader = analyze()
    cache: dict = {}
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: launched_wrapper_findings(result, top, rule, reader, cache, product, by_rel))
