"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it.

One run; the driver lists every rule that has results (with help text from the rule's doc page);
each result points at a path relative to `%SRCROOT%` and carries `partialFingerprints` from the
finding's line-independent fingerprint, so alerts survive edits that move lines.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from auditor import TOOL_NAME, __version__
from auditor.findings import Finding
from auditor.report.common import INFORMATION_URI, relative_uris, repository_base

if TYPE_CHECKING:
    from auditor.report import Report
    from auditor.rules import Rule

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "npuAuditFingerprint/v1"
BASE_ID = "%SRCROOT%"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text[: end + 1] if end != -1 else text


def _rule_descriptor(code: str, rule: "Rule | None", example: Finding, product: str | None) -> dict[str, Any]:
    if rule is not None:
        what, why, use = rule.doc["what"], rule.doc["why"], rule.doc["use_instead"]
        name, category, effort, fix = rule.name, rule.category, rule.effort, rule.fix
        level = LEVELS[rule.severity_for(product or "default")]
        bad = rule.examples_flag[0].rstrip() if rule.examples_flag else None
    else:
        # Dynamic findings (trace, execute) may carry codes the catalogue does not list.
        what, why = example.message, f"Found by the {example.source} stage of {TOOL_NAME}."
        use = example.substitution or "See the message."
        name, category, effort, fix = example.name, example.category, example.effort, example.fix
        level, bad = LEVELS[example.severity], None
    text = f"What it finds: {what}\n\nWhy it matters on Ascend: {why}\n\nUse instead: {use}"
    markdown = f"**What it finds**\n\n{what}\n\n**Why it matters on Ascend**\n\n{why}\n\n"
    if bad:
        markdown += f"**Example**\n\n```python\n{bad}\n```\n\n"
    markdown += f"**Use instead**\n\n{use}\n"
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": _first_sentence(what)},
        "fullDescription": {"text": " ".join(f"{what} {why}".split())},
        "help": {"text": text, "markdown": markdown},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["ascend-migration", category], "category": category,
                       "effort": effort, "fix": fix},
    }


def _region(f: Finding) -> dict[str, int] | None:
    if f.line < 1:
        return None
    region = {"startLine": f.line, "startColumn": max(f.col, 1)}
    # SARIF end columns are exclusive, like libcst's; drop an end that does not lie after the start.
    if f.end_line > f.line or (f.end_line == f.line and f.end_col > region["startColumn"]):
        region.update(endLine=f.end_line, endColumn=max(f.end_col, 1))
    return region


def _location(uri: str, region: dict[str, int] | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": BASE_ID}}
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def document(report: "Report", rules: "dict[str, Rule] | None" = None, base: Path | None = None) -> dict[str, Any]:
    rules = rules or {}
    base = (base or repository_base(report)).resolve()
    uri = relative_uris(report, base)
    product = report.target.product if report.target is not None else None
    first_of: dict[str, Finding] = {}
    for f in report.findings:
        first_of.setdefault(f.code, f)
    codes = sorted(first_of)
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for f in report.findings:
        text = f.message if not f.substitution else f"{f.message}\nUse instead: {f.substitution}"
        result: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": text},
            "locations": [_location(uri(f.path), _region(f))],
            "properties": {"category": f.category, "effort": f.effort, "fix": f.fix,
                           "source": f.source, "symbol": f.symbol, "substitution": f.substitution},
        }
        if f.fingerprint:
            result["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": TOOL_NAME,
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": INFORMATION_URI,
            "rules": [_rule_descriptor(c, rules.get(c), first_of[c], product) for c in codes],
        }},
        "originalUriBaseIds": {BASE_ID: {"uri": base.as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": {"text": f"{e.kind}: {e.message}"},
                "locations": [_location(uri(e.path), {"startLine": e.line} if e.line and e.line > 0 else None)],
            } for e in report.errors],
        }],
    }
    if report.target is not None:
        run["properties"] = {"target": {**report.target.to_dict(), "description": report.target.describe()}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write(report: "Report", stream: TextIO, rules: "dict[str, Rule] | None" = None) -> None:
    json.dump(document(report, rules), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
