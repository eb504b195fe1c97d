"""`audit ops SYMBOL...`: answer coverage questions from the tables.

Exit status: 0 when at least one symbol is known to the tables (supported or not: the answer is the
output, not a verdict); 2 when every symbol is unknown, or the tables cannot be read.
"""
from __future__ import annotations

import argparse
import json
import sys

from auditor.target import PRODUCTS, Target

_MARK = {True: "[green]yes[/]", False: "[red]no[/]", "unverified": "[yellow]unverified[/]", None: "[dim]no verdict[/]"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("symbols", nargs="+", metavar="SYMBOL",
                        help="aten overloads (aten::split.Tensor), Python APIs (torch.linalg.eig), collectives "
                             "(torch.distributed.gather, ReduceOp.AVG), torch_npu ops (torch_npu.npu_rms_norm), "
                             "environment variables (NCCL_BUFFSIZE) or dtypes (bf16)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def answer_for(symbol: str, target: Target):
    from auditor.coverage import Coverage, lookup

    answer = lookup(symbol, target)
    if answer.kind == "unknown":  # dtypes are only asked for by name: 'bf16', 'float8_e4m3fn'
        from auditor.coverage.products import normalize_dtype

        if normalize_dtype(symbol):
            return Coverage.load(target).dtype_answer(symbol)
    return answer


def _render_text(answers, target: Target, stream) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=stream, highlight=False, soft_wrap=False)
    console.print(f"Target: {target.describe()} (torch_npu line {target.torch_npu}, product {target.product})")
    for a in answers:
        table = Table(show_header=False, box=None, padding=(0, 1))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        table.add_row("symbol", escape(a.symbol))
        table.add_row("kind", a.kind)
        table.add_row("supported", _MARK.get(a.supported, escape(str(a.supported))) + f"  via {escape(a.via)}")
        if a.products:
            table.add_row("products", "  ".join(
                f"{p}: {_MARK.get(a.products.get(p), escape(str(a.products.get(p))))}" for p in PRODUCTS
                if p in a.products))
        if a.dtypes:
            table.add_row("dtypes", ", ".join(a.dtypes))
        if a.substitute:
            table.add_row("use instead", escape(a.substitute))
        if a.notes:
            table.add_row("notes", escape(a.notes))
        if a.source:
            table.add_row("source", f"[dim]{escape(a.source)}[/]")
        console.print()
        console.print(table)


def run(args: argparse.Namespace, target: Target, stream=None) -> int:
    from auditor.coverage import TablesMissing

    stream = stream or sys.stdout
    try:
        answers = [answer_for(s, target) for s in args.symbols]
    except TablesMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "format", "text") == "json":
        stream.write(json.dumps([a.to_dict() for a in answers], ensure_ascii=False, indent=2) + "\n")
    else:
        _render_text(answers, target, stream)
    return 2 if all(a.kind == "unknown" for a in answers) else 0
