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

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from auditor.findings import FileResult, Finding
from auditor.project.launched import _MAX_SCRIPT_BYTES, climbing_path, launch_bases, resolve_launched
from auditor.project.makefile import _join, add_call_findings, recorded_calls, unsuppressed

SUMMARY_KEY = "called_scripts"
# the functions a script defines, {name: [line of `name() {`, line of its closing `}`]}, read by the shell reader
# (shell._record_function) from its one parse of the script
FUNCTIONS_KEY = "shell_functions"
_SCRIPT_SUFFIXES = (".sh", ".bash")
_SOURCING = (".", "source")
_SHELLS = ("bash", "sh", "zsh", "dash")
_MAX_ARGS = 64


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
    path = _join("" if cwd is None or cwd.startswith("/") else cwd, word) or climbing_path(cwd, word)
    # the words after the script: the options it parses into its own variables (option_findings)
    return None if not path else ({"file": path, "args": words[at + 1:at + 1 + _MAX_ARGS]}, at)


def _launch_findings(result: FileResult) -> list[Finding]:
    """The called script's launch findings (a `launched` file in their data), at most one per category, first
    line first."""
    out: dict[str, Finding] = {}
    for f in sorted(result.findings, key=lambda f: f.sort_key()):
        if isinstance(f.data, dict) and f.data.get("launched") and f.severity != "info":
            out.setdefault(f.category, f)
    return list(out.values())


# an option branch of the called script's `case` that stores the option's value in a variable (`--cuda-visible-devices)
# CUDA_VISIBLE_DEVICES=$2`, `-d|--data) data="$2"`, getopts' `$OPTARG`, `--port=*) PORT="${1#*=}"`)
_OPTION_BRANCH_RE = re.compile(r"""(?m)^[ \t]*\(?[ \t]*((?:-{1,2}[\w-]+(?:=\*)?\|?)+)[ \t]*\)[ \t]*(?:#[^\n]*)?\n?[ \t]*"""
                               r"""([A-Za-z_]\w*)=["']?\$(?:2\b|\{2\}|OPTARG\b|\{OPTARG\}|\{1#\*=\})""")


class ScriptText:
    """What the three readings of a script's text need (the caller's `source` line, the calls of a sourced script's
    functions, the called script's option branches), read from the text once per script and run."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # {variable: (its options, the line of the branch's assignment)}, first branch per variable
        self.branches: dict[str, tuple[list[str], int]] = {}
        for m in _OPTION_BRANCH_RE.finditer(text):
            options = [o.removesuffix("=*") for o in m.group(1).split("|") if o]
            self.branches.setdefault(m.group(2), (options, text.count("\n", 0, m.start(2)) + 1))
        # {variable: the lines that assign it (`INFER_TYPE="vLLM"`, `export PORT=8000`)}, for the branches' variables
        self.assigned = {variable: [text.count("\n", 0, m.start()) + 1 for m in re.finditer(
            r"(?m)^[ \t]*(?:export[ \t]+)?" + variable + r"=", text)] for variable in self.branches}

    def sources_at(self, line: int) -> bool:
        """The line `line` (1-based; past the end: the last) starts with `source` or `.`."""
        return bool(re.match(r"[ \t]*(?:source|\.)[ \t]", (self.lines or [""])[min(line, len(self.lines)) - 1]))


def option_findings(script: ScriptText, findings: list[Finding], args: list[str]) -> list[tuple[Finding, str]]:
    """The called script's findings that the caller's options decide, each with how: an option the script stores in
    a variable (its `case` branch) takes the findings of that branch's assignment when the caller passes it (`bash
    start_gunicorn.sh --cuda-visible-devices 0`: `CUDA_VISIBLE_DEVICES=$2`), else those of the variable's default
    assignment (`INFER_TYPE="vLLM"` when the caller passes no `--infer-type`) (t20b, LLMxMapReduce)."""
    passed = {a.split("=", 1)[0] for a in args if a.startswith("-")}
    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        if f.severity != "info" and not (isinstance(f.data, dict) and f.data.get("launched")):
            by_line.setdefault(f.line, []).append(f)
    if not by_line:
        return []
    out = []
    for variable, (options, branch_line) in script.branches.items():
        given = next((o for o in options if o in passed), None)
        if given is not None:
            out += [(f, f"`{given}`") for f in by_line.get(branch_line, [])]
            continue
        if any("$@" in a or "$*" in a or "${@" in a for a in args):
            continue            # `./run.sh "$@"`: the caller's own options, not known here
        for line in script.assigned[variable]:
            if line != branch_line:
                out += [(f, f"no `{options[-1]}` (the script's default)") for f in by_line.get(line, [])]
    return out


def _functions(result: FileResult) -> dict[str, tuple[int, int]]:
    """{name: (first line, last line)} of the shell functions a script defines, as its reader kept them; a malformed
    entry (a summary a caller built by hand) is skipped."""
    held = (result.summary or {}).get(FUNCTIONS_KEY)
    out: dict[str, tuple[int, int]] = {}
    for name, span in held.items() if isinstance(held, dict) else ():
        if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(n, int) for n in span):
            out[name] = (span[0], span[1])
    return out


def sourced_function_calls(caller: ScriptText, source_line: int, functions: dict, called_own: list[Finding]
                           ) -> list[tuple[int, int, int, str, Finding]]:
    """(line, col, end col, function, body finding) for each line of the calling script, below its `source lib.sh`
    line, that calls a function the sourced script defines whose body has a finding (dart-math's `source
    utils/init.sh` then `load_cuda 12.3`, whose body runs `module load "cuda-${ver}"`): one per call and category,
    first body line first (t23e, tuned on project test32)."""
    bodies: dict[str, list[Finding]] = {}
    for name, (start, end) in functions.items():
        inside = sorted((f for f in called_own if start < f.line < end and f.severity != "info"),
                        key=lambda f: f.sort_key())
        first: dict[str, Finding] = {}
        for f in inside:
            first.setdefault(f.category, f)
        if first:
            bodies[name] = list(first.values())
    if not bodies:
        return []
    # the function's name as a command: after `VAR=value` prefixes, `&&`, `||`, `;` or `then`, or opening a command
    # substitution (`GPUS=(\`get_all_gpus_uuids\`)`, `X=$(load_cuda)`: Triton model analyzer's QA scripts; tp37),
    # never inside a word
    call_re = re.compile(r"(?:^|&&|\|\||;|\bthen\b|\bdo\b|\$\(|`)[ \t]*(?:[A-Za-z_]\w*=\S*[ \t]+)*(" + "|".join(
        re.escape(n) for n in sorted(bodies, key=len, reverse=True)) + r")(?=[ \t;&|`)]|$)")
    out = []
    for number, line in enumerate(caller.lines[source_line:], source_line + 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        for m in call_re.finditer(code):
            out += [(number, m.start(1) + 1, m.end(1) + 1, m.group(1), f) for f in bodies[m.group(1)]]
    return out


def called_script_findings(result: FileResult, root: Path, product_findings: Callable[[str], list[Finding] | None],
                           cache: dict,
                           called_text: Callable[[str], tuple[ScriptText, list[Finding], dict] | None] | None = None
                           ) -> list[Finding]:
    """The findings of `result`'s recorded calls of a script of the tree whose own lines launch a file that fails or
    picks a CUDA-only path on Ascend."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if not calls:
        return []
    bases = launch_bases(bases, root)
    new: list[Finding] = []
    for call in calls:
        try:
            call_pos, rel, args = (call["line"], call["col"], call["end_col"]), call["file"], call.get("args") or []
        except (KeyError, TypeError):
            continue
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
        own = called_text(called) if called_text is not None else None
        caller = called_text(result.path) if own is not None and called_text is not None else None
        if caller is not None and own is not None and caller[0].sources_at(call_pos[0]):
            for line, col, end_col, name, f in sourced_function_calls(caller[0], call_pos[0], own[2], own[1]):
                new.append(replace(
                    f, path=result.path, line=line, col=col, end_line=line, end_col=end_col, fix="none",
                    message=f"`{name}` is defined in `{rel}`, sourced at line {call_pos[0]}; at {called}:{f.line}, "
                            f"{f.message}",
                    data={"called_script": called, "chain": [f"{called}:{f.line}"]}))
        categories = {f.category for f in new if f.line == call_pos[0]}
        for f, how in option_findings(own[0], own[1], args) if own is not None else []:
            if f.category in categories:
                continue        # one finding per calling line and category
            categories.add(f.category)
            line, col, end_col = call_pos
            new.append(replace(
                f, path=result.path, line=line, col=col, end_line=line, end_col=end_col, fix="none",
                message=f"this line runs `{rel}` with {how}; at {called}:{f.line}, {f.message}",
                data={"called_script": called, "chain": [f"{called}:{f.line}"]}))
    return unsuppressed(new, calls, Path(result.path), root) if new else new


def apply_called_scripts(results: list[FileResult], root: Path, analyze: Callable[[], Callable[[bytes, str], FileResult]],
                         call_passes: Callable[[list[FileResult]], None]) -> None:
    """Add the launch findings of the scripts each file calls to the calling lines (tree_calls, after the other tree
    passes; `call_passes` runs those passes on a called script the run did not audit)."""
    if not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    top = root if root.is_dir() else root.parent
    # the run's own scripts as the other passes left them, before this pass adds to them: one level deep
    by_rel = {r.path: (_launch_findings(r), list(r.findings), _functions(r)) for r in results}
    cache: dict = {}
    reader: list = []

    def read(rel: str) -> tuple[ScriptText, list[Finding], list[Finding], dict] | None:
        """The called script's text (read once, its readings shared by the three checks), launch findings, own
        findings and functions (the run's file as the other passes left it, else one analysis of it with those
        passes)."""
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
                if rel in by_rel:
                    launch, own, functions = by_rel[rel]
                else:
                    if not reader:
                        reader.append(analyze())
                    called = reader[0](data, rel)
                    call_passes([called])
                    launch, own, functions = _launch_findings(called), list(called.findings), _functions(called)
                found = (ScriptText(data.decode("utf-8", errors="replace")), launch, own, functions)
            cache[key] = found
        return cache[key]

    def findings_of(rel: str) -> list[Finding] | None:
        if rel in by_rel:
            return by_rel[rel][0]
        found = read(rel)
        return found[1] if found is not None else None

    def text_of(rel: str) -> tuple[ScriptText, list[Finding], dict] | None:
        found = read(rel)
        return (found[0], found[2], found[3]) if found is not None else None
    add_call_findings(results, root, SUMMARY_KEY, lambda result, here: called_script_findings(
        result, here, findings_of, cache, text_of))
