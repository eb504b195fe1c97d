"""`cmake` configure calls in scripts, CI steps, Dockerfile RUN lines and notebook `!` lines, resolved against the
project's own top-level CMakeLists.txt (t15h, issue 15: tiny-cuda-nn's CI `cmake . -B build`, a configure whose
source tree enables the CUDA language). The same two steps as `make` calls (auditor/project/makefile.py), because
the CMakeLists.txt is another file of the tree:

1. the shell reader records each configure call with its source folder (`-S dir`, the path argument, or the folder
   the script `cd`-ed to) in the file's summary (`cmake_calls`, kept in the cache entry);
2. after every file is read, `apply_cmake_builds` reads the CMakeLists.txt of that folder (from the tree's root, then
   from the calling file's folder) with the CMake reader (auditor/project/cmake.py) and adds one finding per call
   whose source tree has an error there: the CUDA language enabled outside an option's branch, `.cu` sources,
   `find_package(CUDAToolkit REQUIRED)`, NCCL / cuBLAS lookups. Guarded parts (information in that file) do not
   count: a configure that needs them only under an option runs on a host without CUDA.

`cmake --build`, `cmake --install`, `cmake -E` / `-P` scripts and `--version` run no configure. Nothing is run.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from auditor.findings import FileResult, Finding
from auditor.project.makefile import _join, add_call_findings, call_finding, positioned, recorded_calls, unsuppressed

SUMMARY_KEY = "cmake_calls"
_MAX_BYTES = 512 * 1024
# options that take the next word as their value (`-G Ninja`, `-A x64`, `-D NAME=value`, `--preset linux`)
_VALUE_OPTS = {"-S", "-B", "-G", "-A", "-T", "-C", "-D", "-U", "--preset", "--toolchain", "--install-prefix",
               "--log-level", "--graphviz", "--warn-uninitialized-file", "-W"}
# modes that are not a configure of a source tree
_NOT_CONFIGURE = {"--build", "--install", "--open", "-E", "-P", "--version", "-version", "--help", "-h", "-N",
                  "--find-package", "--system-information", "--workflow", "--list-presets"}


def cmake_call(words: list[str], cwd: str | None) -> dict[str, Any] | None:
    """The source folder of `cmake [options] [path]` (words after `cmake`), relative to where the script started;
    None for the modes that configure nothing, or when the folder is not literal (`-S $SRC`, a `cd` to a variable)."""
    if cwd is None or not words:
        return None
    source: str | None = None
    positional: list[str] = []
    build_given = False
    i = 0
    while i < len(words):
        w = words[i]
        if w in _NOT_CONFIGURE or w.startswith("--build=") or w.startswith("-E") and len(w) > 2 and w[2:].isalpha():
            return None
        value = None
        if w in _VALUE_OPTS:
            # the next word, unless it is an option: a value the reader could not see (`-B ${{ env.build_dir }}`,
            # an expansion) is not taken from the option after it
            nxt = words[i + 1] if i + 1 < len(words) else ""
            value = "" if nxt.startswith("-") else nxt
            i += 0 if nxt.startswith("-") else 1
        elif w.startswith(("-S", "-B")) and len(w) > 2:
            w, value = w[:2], w[2:]
        elif w.startswith("-"):
            pass
        else:
            positional.append(w)
        if w == "-S":
            source = value
        elif w == "-B":
            build_given = True
        i += 1
    if source is None:
        if positional:
            source = positional[-1]       # `cmake ..`, `cmake . -B build`, `cmake ../llama.cpp`
        elif build_given:
            source = "."                  # `cmake -B build`: the current folder is the source (CMake >= 3.13)
        else:
            return None                   # `cmake` alone, or only options: an existing build folder, not known
    if "$" in source or "%" in source or "{" in source:
        return None
    folder = _join(cwd, source, climb=cwd.startswith(".."))
    return None if folder is None else {"dir": folder}


def outside_cd(cwd: str | None, outside: str | None, target: str | None) -> str | None:
    """The folder after `cd target` once the script has climbed above where it started, relative to that start
    (`../Nanoflow/pipeline`): NanoFlow's setup.sh runs `cd ..` to download an installer beside its checkout, then
    `cd Nanoflow` back in by the checkout's folder name and configures `cmake ..` from pipeline/build. cwd: the
    folder before this `cd` while it was known (below the start), else None; outside: this reading's folder so far.
    None while the folder is below the start (cwd says it) or not known."""
    if not target or target in ("-", "~") or "$" in target or target.startswith(("/", "~")):
        return None
    base = cwd if cwd is not None else outside
    if base is None:
        return None
    folder = _join(base, target, climb=True)
    return folder if folder is not None and folder.startswith("..") else None


def _inside(top: Path, base: Path, folder: str) -> Path | None:
    """base/folder, lexically normalised, when it lies in the audited tree `top` (a folder reached through `..`
    above the calling file's folder or the tree's root: only a way back into the tree is read, never a folder
    beside it)."""
    candidate = Path(os.path.normpath(base / folder))
    top_norm = Path(os.path.normpath(top))
    return candidate if candidate == top_norm or top_norm in candidate.parents else None


def _read_lists(folder: Path, cache: dict, analyze: Callable[[bytes, str], FileResult]) -> Finding | None:
    """The first error finding of folder/CMakeLists.txt (None when there is none, or no such file)."""
    path = folder / "CMakeLists.txt"
    key = str(path)
    if key in cache:
        return cache[key]
    found = None
    try:       # is_file: a FIFO or device named CMakeLists.txt is refused, never opened
        if path.is_file() and path.stat().st_size <= _MAX_BYTES:
            result = analyze(path.read_bytes(), "CMakeLists.txt")
            errors = [f for f in result.findings if f.severity == "error"]
            found = min(errors, key=lambda f: f.line) if errors else None
    except OSError:
        found = None
    cache[key] = found
    return found


def cmake_build_findings(result: FileResult, root: Path, rule, analyze: Callable[[bytes, str], FileResult],
                         cache: dict | None = None, product: str = "a2") -> list[Finding]:
    """The findings of `result`'s recorded `cmake` configure calls whose source tree needs CUDA; root is the tree's
    top folder (a CI step and most scripts run there), the calling file's folder is tried next. analyze(data, name)
    reads a CMakeLists.txt (the static engine's analyze_bytes)."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if rule is None or not calls:
        return []
    cache = {} if cache is None else cache
    here = Path(result.path)
    new = []
    for call_pos, folder in positioned(calls, "dir"):
        why = None
        for base in bases:
            candidate = (base / folder if not folder.startswith("..") else _inside(root, base, folder)) \
                if folder else base
            if candidate is not None and (candidate / "CMakeLists.txt").is_file():
                why = _read_lists(candidate, cache, analyze)
                break
        if why is None:
            continue
        if folder.startswith("..") and candidate is not None:   # the way back in, named as the tree's folder
            folder = "" if (rel := Path(os.path.relpath(candidate, root)).as_posix()) == "." else rel
        where = f"{folder}/CMakeLists.txt" if folder else "CMakeLists.txt"
        symbol = f"cmake {folder or '.'} -> {where}"
        message = rule.message.replace("{symbol}", symbol) + f" (configured here; {where}:{why.line}: `{why.symbol}`, {why.code})"
        new.append(call_finding(rule, product, result, call_pos, message, symbol,
                                {"cmakelists": where, "line": why.line, "code": why.code}))
    if new:
        # the calling file's own `# npu-audit: ignore[...]` comments, as for the findings of its own pass
        return unsuppressed(new, calls, here, root)
    return new


def apply_cmake_builds(results: list[FileResult], root: Path, rules, analyze: Callable[[], Callable[[bytes, str], FileResult]],
                       product: str = "a2") -> None:
    """Add the `cmake` findings to every file that recorded configure calls (runner, after the per-file pass);
    analyze() gives the reader of a CMakeLists.txt (built only when some file configures with cmake)."""
    rule = next((r for r in rules if "cmakelists" in r.match), None)
    if rule is None or not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    reader = analyze()
    cache: dict = {}
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: cmake_build_findings(result, top, rule, reader, cache, product))
