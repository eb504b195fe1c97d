"""The static pass on a source snippet, for tests that read findings line by line (precision classes, mined
classes, held-out rows): one helper instead of a copy in each test file."""
from __future__ import annotations

import textwrap


def findings_by_line(engine, src: str, rel: str = "pkg/mod.py") -> dict[int, list]:
    """The findings of `engine` on the dedented snippet as if it were the file `rel`, keyed by line."""
    out: dict[int, list] = {}
    for f in engine.analyze_bytes(textwrap.dedent(src).encode(), rel).findings:
        out.setdefault(f.line, []).append(f)
    return out
