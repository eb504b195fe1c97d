"""Headers only the CUDA member of a per-backend set includes (issue 11, tq46a, tuned on heldout53's fastllm).

A C++ engine with its own backends keeps its CUDA sources in a per-backend folder (`src/devices/cuda/` beside
`src/devices/cpu/`), which backend_files lowers to info as the CUDA member of the set. The CUDA libraries that member
compiles in, copied elsewhere in the tree (`third_party/flashinfer/attention/mla.cuh`, `third_party/deep_gemm/...`
reached by `#include <deep_gemm/impls/...cuh>`), build only with it: an Ascend build that leaves the member out never
compiles them either. So a C / C++ / CUDA file that is reached by `#include` from such a member, and whose every
compiled source that reaches it is a member file, is read as part of the member: its findings are info
(context platform-class), never rewritten. A header any other source (`.cu`, `.cpp`: a CPU source, a test) reaches
keeps its findings; so does a source nothing includes (what compiles it is the build's question). A header no source
reaches (the rest of a copied library) counts for neither side.
Applied once per run, after apply_backend_files (it needs that pass's reading of the members).
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

from auditor.source import SourceError
from auditor.static.backend_files import ModuleMembers, per_backend_sibling
from auditor.static.backends import discount_findings, undiscounted
from auditor.static.project_imports import read_counted

_C_FAMILY = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cpp", ".cc", ".cxx", ".c")
_HEADERS = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")
_INCLUDE_RE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_PREFIX = 64 * 1024         # includes sit at a file's top
_NOTE = "included only by the CUDA member of a per-backend set ({member} includes it): it builds with that member, " \
        "which an Ascend build leaves out; left as is"


def _includes(files: dict[str, Path], project) -> dict[str, set[str]]:
    """{file: the tree's files it includes}: a name relative to the includer's folder when that file exists, else
    every file whose path ends with the name (`<deep_gemm/common/math.cuh>` from an include directory)."""
    by_suffix: dict[str, list[str]] = {}
    for rel in files:
        by_suffix.setdefault(posixpath.basename(rel), []).append(rel)
    out: dict[str, set[str]] = {}
    for rel, path in files.items():
        try:
            head = read_counted(project, path, _PREFIX, prefix=True)
        except (OSError, SourceError):
            continue
        targets: set[str] = set()
        for raw in _INCLUDE_RE.findall(head):
            name = raw.decode("utf-8", "replace").strip()
            local = posixpath.normpath(posixpath.join(posixpath.dirname(rel), name))
            if local in files:
                targets.add(local)
                continue
            targets.update(r for r in by_suffix.get(posixpath.basename(name), ())
                           if r == name or r.endswith("/" + name))
        targets.discard(rel)
        if targets:
            out[rel] = targets
    return out


def _reach(graph: dict[str, set[str]], starts: list[str]) -> set[str]:
    """The files `starts` include, transitively."""
    out: set[str] = set()
    stack = list(starts)
    while stack:
        for t in graph.get(stack.pop(), ()):
            if t not in out:
                out.add(t)
                stack.append(t)
    return out


def apply_member_includes(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the findings of files only the CUDA member of a per-backend set includes; returns how many changed."""
    candidates = {r.path for r in results if r.path.endswith(_C_FAMILY) and any(undiscounted(f) for f in r.findings)}
    if not candidates:
        return 0
    sources = {rel: path for path, rel in files if rel.endswith(_C_FAMILY)}
    members = ModuleMembers(project, files)
    member_of = {rel: per_backend_sibling(path, rel, members) for rel, path in sources.items()}
    if not any(member_of.values()):
        return 0
    graph = _includes(sources, project)
    includers: dict[str, set[str]] = {}
    for rel, targets in graph.items():
        for t in targets:
            includers.setdefault(t, set()).add(rel)
    # what the members compile in, and what any other compiled source does (a header nothing compiles counts for
    # neither: the rest of a copied library that no source includes)
    by_member = _reach(graph, [rel for rel, m in member_of.items() if m])
    by_other = _reach(graph, [rel for rel, m in member_of.items() if not m and not rel.endswith(_HEADERS)])
    inside = {rel for rel in by_member - by_other if not member_of.get(rel)}
    lowered = 0
    for result in results:
        if result.path not in inside or result.path not in candidates:
            continue
        member = _member_root(result.path, includers, member_of)
        lowered += discount_findings(result, "platform-class", _NOTE.format(member=member), lower=undiscounted)
    return lowered


def _member_root(rel: str, includers: dict[str, set[str]], member_of: dict[str, str | None]) -> str:
    """A member file that reaches `rel` (breadth first up the includers), for the note."""
    seen, queue = {rel}, [rel]
    while queue:
        nxt = []
        for r in queue:
            for i in sorted(includers.get(r, ())):
                if member_of.get(i):
                    return i
                if i not in seen:
                    seen.add(i)
                    nxt.append(i)
        queue = nxt
    return "a member file"
