"""The console view of Report.sections['execute']: one row per module, worst first."""
from __future__ import annotations

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

STYLE = {"error": "bold red", "warning": "yellow", "pass": "green", "n/a": "dim"}
_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("module", "left"), ("type", "left"), ("verdict", "left"), ("own err", "right"), ("output err", "right"),
    ("output cos", "right"), ("grad cos", "right"), ("why", "left"))


def _error(x) -> str:
    return "-" if x is None else f"{x:.1f}x"


def _cos(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def _verdict(v: str | None) -> Text:
    # Text, not markup: the report's console has markup off so that user strings print as written
    return Text("-") if v is None else Text(v, STYLE.get(v, ""))


def render_execute_section(section: dict, console: Console, limit: int = 25) -> None:
    """Print the per-module table; `limit` rows, then a count of what was left out (all passing last)."""
    if section.get("error"):
        console.print(Text.assemble((section.get("title", "Execute mode"), "bold"), ": ", (section["error"], "red")))
        return
    console.print(Text(section["title"], "bold"))
    loss = section.get("loss") or {}
    show = lambda x: "inf/nan" if x is None else f"{x:.6g}"
    facts = [f"{section['parameters']:,} parameters",
             f"loss {show(loss.get('golden'))} ({section['golden_dtype']}) vs "
             f"{show(loss.get('candidate'))} ({section['amp']})",
             f"ran in {section['timings_s']['total']:.1f} s"]
    if section.get("step_time_s") is not None:
        facts.append(f"device step {section['step_time_s'] * 1000:.1f} ms")
    if section.get("peak_memory_bytes") is not None:
        facts.append(f"peak device memory {section['peak_memory_bytes'] / 2**20:,.0f} MiB")
    console.print("  " + ", ".join(facts))
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column, justify in _COLUMNS:
        table.add_column(column, justify=justify, overflow="fold")
    rows = section["rows"]
    for row in rows[:limit]:
        table.add_row(row["module"], row["type"], _verdict(row["verdict"]), _error(row["own_error_x_tol"]),
                      _error(row["output_error_x_tol"]), _cos(row["output_cosine"]), _cos(row["grad_cosine"]),
                      row["reason"] if row["verdict"] != "pass" else "")
    console.print(table)
    if len(rows) > limit:
        rest = rows[limit:]
        counts = {v: sum(1 for r in rest if r["verdict"] == v) for v in ("error", "warning", "pass")}
        console.print(f"  ... {len(rest)} more modules ("
                      + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + "; all rows in --format json)")
    console.print("  errors are x the " + section["amp"] + " tolerance (msprobe's rtol); own = the module alone "
                  "on the golden's inputs, output = what it inherits plus its own")
    for note in [*section.get("notes", []), section.get("hardware_note", "")]:
        if note:
            console.print(Text("  " + note, "dim"))
