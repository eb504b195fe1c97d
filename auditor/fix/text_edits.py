"""`audit fix` for project files (scripts, Dockerfiles, configs): the edit each finding carries from
detection (`data["edit"]`), applied as text so comments, quoting and layout stay as they were.

Two shapes: {"line", "col", "end_col", "text"} replaces characters on one line (a config value);
{"insert_after", "text"} adds a line (a script's HCCL twin of an NCCL variable, the original kept so the
GPU run is configured as before). Edits run bottom-up; the result is audited again for what remains."""
from __future__ import annotations

from typing import Callable

from auditor.findings import Finding
from auditor.fix import FileFix, applicable
from auditor.project.hits import decode_text
from auditor.static.engine import StaticEngine


def apply_edits(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    lines = text.split("\n")
    applied: list[Finding] = []
    edits = sorted(((f.data["edit"], f) for f in findings if "edit" in f.data),
                   key=lambda e: (e[0].get("insert_after") or e[0].get("line"), e[0].get("col", 10**9)), reverse=True)
    inserted: set[tuple[int, str]] = set()
    for edit, f in edits:
        if "insert_after" in edit:
            key = (edit["insert_after"], edit["text"])
            if key in inserted:
                continue
            inserted.add(key)
            lines.insert(edit["insert_after"], edit["text"])
        else:
            i = edit["line"] - 1
            if not 0 <= i < len(lines):
                continue
            lines[i] = lines[i][:edit["col"] - 1] + edit["text"] + lines[i][edit["end_col"] - 1:]
        applied.append(f)
    return "\n".join(lines), applied


def fix_project_bytes(data: bytes, rel: str, engine: StaticEngine, *, unsafe: bool = False,
                      selected: Callable[[Finding], bool] = lambda f: True) -> FileFix:
    result = FileFix(rel)
    text, error = decode_text(data, rel)
    if text is None:                      # decode_text gives an error exactly when it gives no text
        assert error is not None
        result.error = error.message
        return result
    result.bom = data.startswith(b"\xef\xbb\xbf")
    result.original = result.fixed_text = text

    def audit(source: str) -> list[Finding]:
        res = engine.analyze_bytes(source.encode("utf-8"), rel)
        if res.error is not None:
            raise ValueError(res.error.message)
        return [f for f in res.findings if selected(f)]

    try:
        findings = audit(text)
        new_text, applied = apply_edits(text, [f for f in findings if applicable(f, unsafe)])
        if applied:
            result.fixed.extend(applied)
            result.fixed_text = new_text
            findings = audit(new_text)
        result.remaining = findings
    except ValueError as exc:
        result.error = str(exc)
        result.fixed_text = text
    return result
