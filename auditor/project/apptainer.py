"""Apptainer / Singularity definition files (`*.def`, `Singularity`, `Singularity.gpu`, `Apptainer`; t15k): the
container recipe of HPC clusters, where Docker is not allowed. The header's `From:` is the base image (read as a
Dockerfile's FROM: `From: nvcr.io/nvidia/pytorch:24.02-py3`); the shell sections (`%post`, `%environment`,
`%runscript`, `%startscript`, `%test`, `%setup` and the SCIF `%app*` ones) go to the shell reader with their own line
numbers. A `.def` file without a `Bootstrap:` header (a Windows module-definition file, a C++ X-macro `.def`) is
no recipe and holds nothing."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from auditor.findings import FileResult
from auditor.project.hits import Collector, decode_text, matchers
from auditor.project.shell import gate_findings, scan_shell

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

_BOOTSTRAP_RE = re.compile(r"(?i)^\s*bootstrap\s*:\s*\S")
_FROM_RE = re.compile(r"(?i)^\s*from\s*:\s*(\S+)")
_SECTION_RE = re.compile(r"^%(\w+)")
_SHELL_SECTIONS = frozenset({"post", "environment", "runscript", "startscript", "test", "setup",
                             "appinstall", "appenv", "apprun", "apptest"})


def analyze_definition(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    col = Collector(engine, rel, text)
    lines = col.lines
    if not any(_BOOTSTRAP_RE.match(line) for line in lines[:40]):
        return col.done()
    m = matchers(engine)
    shell_lines = [""] * len(lines)
    section: str | None = None
    for i, line in enumerate(lines):
        head = _SECTION_RE.match(line)
        if head:
            section = head.group(1).lower()
            continue
        if section is None:
            image = _FROM_RE.match(line)
            if image:
                col.add(m.match_image(image.group(1)), image.group(1), i + 1, image.start(1) + 1)
        elif section in _SHELL_SECTIONS:
            shell_lines[i] = line
    shell = "\n".join(shell_lines)
    if shell.strip():
        scan_shell(col, shell)
    result = col.done()
    if shell.strip():
        gate_findings(result, shell)
    return result
