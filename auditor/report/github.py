"""`--format github`: GitHub Actions workflow commands, which show as annotations on a pull request.

Escaping follows the Actions runner (toolkit `command.ts`): in the message `%`, CR and LF become
`%25`, `%0D`, `%0A`; property values also escape `:` and `,` as `%3A` and `%2C`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from auditor.report.common import relative_uris, repository_base

if TYPE_CHECKING:
    from auditor.report import Report

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: object) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items()
                     if value is not None)
    return f"::{kind} {props}::{escape_data(message)}" if props else f"::{kind}::{escape_data(message)}"


def write(report: "Report", stream: TextIO) -> None:
    uri = relative_uris(report, repository_base(report))
    for f in report.findings:
        message = f.message if not f.substitution else f"{f.message}\nUse instead: {f.substitution}"
        location = {"file": uri(f.path), "line": f.line, "col": f.col}
        if f.end_line >= f.line:
            location.update(endLine=f.end_line, endColumn=f.end_col)
        stream.write(command(COMMANDS[f.severity], message, **location, title=f"{f.code} {f.name}") + "\n")
    for e in report.errors:
        stream.write(command("error", f"{e.kind}: {e.message}", file=uri(e.path),
                             line=e.line, title="npu-audit could not audit this file") + "\n")
