"""The CUDA arm of a build's own platform switch (issue 11, t11m): a CMake build that picks its backend itself
(DeepEP-Ascend's `if(DEEP_EP_PLATFORM STREQUAL "cuda") ... add_subdirectory(csrc) ... endif()` beside
`if(DEEP_EP_PLATFORM STREQUAL "ascend")`, or `if(USE_CUDA)` beside `if(USE_ASCEND)`) already has an Ascend path;
what only its CUDA arm configures is the CUDA member of a per-backend build, which an Ascend build never reaches.

Recognised by structure, not by name: an `if()` / `elseif()` branch whose condition compares one variable with a value
that names CUDA (`STREQUAL` / `MATCHES` / `EQUAL` "cuda", "gpu", "nvidia") or tests a flag whose name names CUDA
(`USE_CUDA`), in a tree whose CMake files test the same variable against a value naming the NPU ("ascend", "npu"),
or a flag that differs only by the backend word (`USE_ASCEND`, `WITH_NPU`). Then, at most info (never rewritten):
- the findings on the lines of that CUDA arm (a `message(FATAL_ERROR "NCCL_ROOT_DIR is not set.")` there stops only a
  CUDA configure);
- every finding in a file below a folder the build adds only in CUDA arms (`add_subdirectory(csrc)`), and in a
  source file it names only in CUDA arms (`cuda_add_library(x csrc/indexing/main.cu)`), when that file is not
  Python (C / C++ / CUDA sources and their build files).
A folder or source the build also adds outside a CUDA arm keeps its findings. Applied once per run, after the
per-file passes (it reads the CMake files of the tree).
"""
from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from auditor.backend_words import backends_in_text
from auditor.static.backends import as_info

_NOTE = ("only the CUDA arm of the build's own platform switch ({where}) builds this; its Ascend arm is the NPU path: "
         "left as is")
_COMPARE_OPS = {"STREQUAL", "MATCHES", "EQUAL", "STRLESS_EQUAL", "VERSION_EQUAL"}
_FLAG_RE = re.compile(r"^\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_PYTHON = (".py", ".pyw", ".pyi")
_READ_LIMIT = 1_000_000


def _cmake_file(rel: str) -> bool:
    name = posixpath.basename(rel)
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def _arm(args: list[str]) -> tuple[str, str] | None:
    """(key, backend) of a branch condition that selects one backend: `X STREQUAL "cuda"` -> (X, cuda), `USE_CUDA`
    -> (USE_*, cuda); None for any other condition (a compound one, `NOT X`, a test of a path)."""
    if len(args) == 3 and args[1].upper() in _COMPARE_OPS:
        var = _FLAG_RE.match(args[0])
        found = backends_in_text(args[2])
        if var and len(found) == 1:
            return var.group(1), next(iter(found))
        return None
    if len(args) == 1:
        flag = _FLAG_RE.match(args[0])
        if flag is None:
            return None
        name = flag.group(1)
        found = backends_in_text(name)
        if len(found) != 1:
            return None
        # the flag with its backend word taken out: `USE_CUDA` and `USE_ASCEND` share `USE_*`
        key = re.sub(r"(?i)(?<![a-z])(cuda|gpu|nvidia|npu|ascend|cann|rocm|hip|xpu|mlu|musa|maca|hpu)(?![a-z])", "*",
                     name)
        return ("flag:" + key.upper(), next(iter(found))) if key != name else None
    return None


def _walk(text: str) -> list[tuple[str, str, int, int]]:
    """The backend arms of a CMake file: (key, backend, first line, last line) of each branch body whose condition
    selects one backend."""
    from auditor.project.cmake import _args, _parser

    tree = _parser().parse(text.encode("utf-8"))
    arms: list[tuple[str, str, int, int]] = []
    stack: list[Any] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "if_condition":
            current: tuple[str, str] | None = None
            for child in node.children:
                if child.type in ("if_command", "elseif_command"):
                    current = _arm([a[0] for a in _args(child)])
                elif child.type == "else_command":
                    current = None
                elif child.type == "body" and current is not None:
                    arms.append((current[0], current[1], child.start_point[0] + 1, child.end_point[0] + 1))
        stack.extend(reversed(node.children))
    return arms


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(_READ_LIMIT + 1)
    except OSError:
        return None
    if len(data) > _READ_LIMIT:
        return None
    return data.decode("utf-8", "replace")


def cuda_arms(files: Sequence[tuple[Path, str]]) -> tuple[dict[str, list[tuple[int, int]]], set[str], set[str], set[str]]:
    """The CUDA arms of the tree's own platform switches: ({cmake rel: [(first, last)]}, folders added only in CUDA
    arms, source files named only in CUDA arms, folders added outside them), all as tree-relative posix paths."""
    from auditor.project.cmake import commands

    parsed: dict[str, tuple[list[tuple[str, str, int, int]], list]] = {}
    for path, rel in files:
        if not _cmake_file(rel):
            continue
        text = _read(path)
        if text is None or "if" not in text.lower():
            continue
        try:
            arms = _walk(text)
            found = commands(text)
        except (ImportError, ValueError, RecursionError):
            continue
        parsed[rel] = (arms, found)
    keys_npu = {key for arms, _ in parsed.values() for key, backend, _a, _b in arms if backend == "npu"}
    spans: dict[str, list[tuple[int, int]]] = {}
    for rel, (arms, _) in parsed.items():
        own = [(a, b) for key, backend, a, b in arms if backend == "cuda" and key in keys_npu]
        if own:
            spans[rel] = own
    inside: set[str] = set()
    outside: set[str] = set()
    sources_in: set[str] = set()
    sources_out: set[str] = set()
    for rel, (_arms, found) in parsed.items():
        base = posixpath.dirname(rel)
        mine = spans.get(rel, [])
        for name, line, _col, args, _guard in found:
            if name == "add_subdirectory" and args:
                target = args[0][0]
                if "$" in target or os.path.isabs(target):
                    continue
                folder = posixpath.normpath(posixpath.join(base, target))
                (inside if any(a <= line <= b for a, b in mine) else outside).add(folder)
            elif name not in ("if", "elseif"):
                for value, vline, _c in args:
                    for part in value.split(";"):
                        part = part.strip()
                        if "$" in part or "." not in posixpath.basename(part) or part.endswith(_PYTHON):
                            continue
                        if not re.search(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)$", part, re.I):
                            continue
                        src = posixpath.normpath(posixpath.join(base, part))
                        (sources_in if any(a <= vline <= b for a, b in mine) else sources_out).add(src)
    # an add outside every CUDA arm counts only from a file the CUDA arms do not already own (`csrc/CMakeLists.txt`
    # adding `kernels` is reached through the arm that adds `csrc`)
    cuda_only = inside - outside
    outside = {d for d in outside if _under(d + "/x", cuda_only) is None}
    return spans, inside - outside, sources_in - sources_out, outside


def _under(rel: str, folders: set[str], kept: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The deepest of `folders` that holds rel, unless a deeper folder in `kept` (added outside the CUDA arms)
    holds it first."""
    parts = rel.split("/")
    for i in range(len(parts) - 1, 0, -1):
        head = "/".join(parts[:i])
        if head in kept:
            return None
        if head in folders:
            return head
    return None


def apply_platform_builds(results: list, files: Sequence[tuple[Path, str]]) -> int:
    """Lower to info the findings that only the CUDA arm of the tree's own platform switch builds; returns how
    many were lowered."""
    if not any(_cmake_file(rel) for _, rel in files):
        return 0
    spans, folders, sources, outside = cuda_arms(files)
    if not spans:
        return 0
    lowered = 0
    for result in results:
        rel = result.path
        own = spans.get(rel)
        folder = None if rel.endswith(_PYTHON) else _under(rel, folders, outside)
        source = not rel.endswith(_PYTHON) and rel in sources
        if own is None and folder is None and not source:
            continue
        kept = []
        for f in result.findings:
            if f.severity == "info" or f.data.get("context"):
                kept.append(f)
                continue
            if folder is not None or source:
                where = f"added in a CUDA arm: {folder}/" if folder is not None else "named in a CUDA arm"
            elif own is not None and any(a <= f.line <= b for a, b in own):
                where = f"{rel}, lines {next(f'{a}-{b}' for a, b in own if a <= f.line <= b)}"
            else:
                kept.append(f)
                continue
            kept.append(as_info(f, "platform-class", _NOTE.format(where=where)))
            lowered += 1
        result.findings = kept
    return lowered
