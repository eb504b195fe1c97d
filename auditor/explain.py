"""`audit explain CODE`: a rule's page, built from the rule's own data (Fixit's habit: its examples are
the same ones the test suite runs)."""
from __future__ import annotations

import textwrap

from auditor.rules import Rule


def _severity_text(rule: Rule) -> str:
    if isinstance(rule.severity, str):
        return rule.severity
    default = rule.severity["default"]
    others = ", ".join(f"{k}: {v}" for k, v in rule.severity.items() if k != "default")
    return f"{default} ({others})"


def render_rule(rule: Rule) -> str:
    out = [f"{rule.code} {rule.name}", "=" * (len(rule.code) + len(rule.name) + 1), ""]
    out.append(f"Category: {rule.category}    Severity: {_severity_text(rule)}    Effort: {rule.effort}    "
               f"Fix: {rule.fix}{'' if rule.default_on else '    (off by default)'}")
    out += ["", "## What it finds", rule.doc["what"], "", "## Why it matters on Ascend", rule.doc["why"]]
    if rule.examples_flag:
        out += ["", "## Example (flagged)", ""]
        for example in rule.examples_flag[:2]:
            out += [textwrap.indent(example.rstrip(), "    "), ""]
    if not rule.examples_flag:
        out.append("")
    out += ["## Use instead", rule.doc["use_instead"]]
    if rule.examples_ok:
        out += ["", "## Not flagged", ""]
        for example in rule.examples_ok[:2]:
            out += [textwrap.indent(example.rstrip(), "    "), ""]
    if rule.symbols:
        mapped = [(s, d.substitution or (f"`{d.replace}`" if d.replace else "")) for s, d in rule.symbols.items()]
        out += ["", f"## Mapping ({len(mapped)} entries)", ""]
        out += [f"- `{s}` -> {sub}" for s, sub in mapped[:400]]
        if len(mapped) > 400:
            out.append(f"- ... and {len(mapped) - 400} more")
    matched = [f"{kind}: {', '.join(values[:12])}{' ...' if len(values) > 12 else ''}" for kind, values in rule.match.items()]
    out += ["", "## Matches", *[f"- {m}" for m in matched]]
    if rule.source_note:
        out += ["", f"Source: {rule.source_note}"]
    return "\n".join(out).rstrip() + "\n"
