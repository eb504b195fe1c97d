"""Suppression comments, in the tool's own form and in the forms users bring from flake8 and ruff.

Line level (on the first or last line of a finding):
    # npu-audit: ignore              every rule
    # npu-audit: ignore[NPU001,NPU1] these codes or code prefixes
    # noqa: NPU001, E501             these codes; codes of other tools are left alone
A bare `# noqa` is not honoured: it is almost always there for the linter (F401 on an optional
`import flash_attn  # noqa`), and honouring it would hide exactly the lines a port must change.
File level (a comment on a line of its own, anywhere in the file):
    # npu-audit: file-ignore         every rule in this file
    # npu-audit: file-ignore[NPU001] these codes in this file
    # npu-audit: noqa[: NPU001]      the same, in ruff's `# ruff: noqa` spelling
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SUPPRESS_RE = re.compile(r"#\s*npu-audit:\s*ignore(?:\[([A-Za-z0-9_,\s-]*)\])?")
NOQA_RE = re.compile(r"#\s*noqa(?::\s*([A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
FILE_RE = re.compile(r"^\s*#\s*npu-audit:\s*(?:file-ignore(?:\[([A-Za-z0-9_,\s-]*)\])?|noqa(?::\s*([A-Za-z0-9_,\s]+))?)\s*$")


def _codes(text: str | None) -> set[str] | None:
    """None: every code."""
    if text is None:
        return None
    return {c.strip().upper() for c in re.split(r"[,\s]+", text) if c.strip()}


def _covers(codes: set[str] | None, code: str) -> bool:
    return codes is None or any(code.startswith(c) for c in codes)


_NONE = ()           # a line without a directive


def line_directives(text: str) -> tuple:
    """The code sets (None: every code) that a line's own-form and noqa comments name."""
    out = []
    if "#" not in text:
        return _NONE
    if "npu-audit" in text:
        m = SUPPRESS_RE.search(text)
        if m:
            out.append(_codes(m.group(1)))
    if "noqa" in text or "NOQA" in text:
        m = NOQA_RE.search(text)
        if m and m.group(1):                      # only noqa with codes (see the module docstring)
            out.append(_codes(m.group(1)))
    return tuple(out)


def line_suppresses(text: str, code: str) -> bool:
    return any(_covers(codes, code) for codes in line_directives(text))


@dataclass
class Suppressions:
    lines: list[str]
    file_all: bool = False
    file_codes: set[str] = field(default_factory=set)
    _by_line: dict[int, tuple] = field(default_factory=dict)   # each line parsed once (a 5 MB line, 170k hits)

    @classmethod
    def of(cls, lines: list[str], text: str | None = None) -> "Suppressions":
        s = cls(lines)
        if "npu-audit" in (text if text is not None else "".join(lines)):
            for line in lines:
                if "npu-audit" in line and (m := FILE_RE.match(line)):
                    codes = _codes(m.group(1) if m.group(1) is not None else m.group(2))
                    if codes is None:
                        s.file_all = True
                    else:
                        s.file_codes |= codes
        return s

    def covers(self, line: int, end_line: int, code: str) -> bool:
        if self.file_all or (self.file_codes and _covers(self.file_codes, code)):
            return True
        for n in {line, end_line}:
            if not 1 <= n <= len(self.lines):
                continue
            directives = self._by_line.get(n)
            if directives is None:
                directives = self._by_line[n] = line_directives(self.lines[n - 1])
            if any(_covers(codes, code) for codes in directives):
                return True
        return False


    def directives_at(self, line: int, end_line: int) -> list[list[str] | None]:
        """Every code set (None: every code) that applies to a span, file-level ones first, as JSON-able lists:
        what `covers` reads, for a pass that must decide later without the file's text (`covered`)."""
        out: list[list[str] | None] = [None] if self.file_all else []
        if self.file_codes:
            out.append(sorted(self.file_codes))
        for n in sorted({line, end_line}):
            if 1 <= n <= len(self.lines):
                directives = self._by_line.get(n)
                if directives is None:
                    directives = self._by_line[n] = line_directives(self.lines[n - 1])
                out.extend(None if codes is None else sorted(codes) for codes in directives)
        return out


def covered(directives: list, code: str) -> bool:
    """Whether code sets kept by `Suppressions.directives_at` silence `code` (as `Suppressions.covers` would)."""
    return any(_covers(None if codes is None else set(codes), code) for codes in directives)


def suppressed(lines: list[str], line: int, end_line: int, code: str) -> bool:
    """One finding against a file's lines (builds the file-level view each call: use Suppressions for many)."""
    return Suppressions.of(lines).covers(line, end_line, code)


def directive_codes(text: str) -> list[tuple[int, str, str]]:
    """(line, code, form) of every code named in a suppression comment. In `# noqa:` only NPU codes are
    ours; the tool's own forms name nothing else."""
    out: list[tuple[int, str, str]] = []
    if "npu-audit" not in text and "noqa" not in text.lower():
        return out
    for number, line in enumerate(text.splitlines(), 1):
        if "#" not in line:
            continue
        if "npu-audit" in line:
            m = FILE_RE.match(line)
            if m:
                for c in sorted(_codes(m.group(1) if m.group(1) is not None else m.group(2)) or ()):
                    out.append((number, c, "# npu-audit: file-ignore"))
            else:
                for m in SUPPRESS_RE.finditer(line):
                    for c in sorted(_codes(m.group(1)) or ()):
                        out.append((number, c, "# npu-audit: ignore"))
        if "noqa" in line.lower():
            for m in NOQA_RE.finditer(line):
                for c in sorted(_codes(m.group(1)) or ()):
                    if c.startswith("NPU"):
                        out.append((number, c, "# noqa"))
    return out
