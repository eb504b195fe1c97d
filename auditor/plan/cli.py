"""The `audit plan` flags and their hand-over to auditor.plan (kept here so auditor/cli.py stays small)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from auditor.plan.report import FORMATS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", type=Path, metavar="PATH",
                   help="a Python file with an audit_entry() function (facts are measured on fake tensors)")
    p.add_argument("--hf-config", type=Path, action="append", metavar="CONFIG_JSON",
                   help="a transformers config.json (closed forms for every layout, plus a measured trace of 1 and 2 "
                        "layers scaled to the full depth); repeat it to plan several models side by side")
    p.add_argument("--entry", metavar="NAME", help="entry function (default audit_entry) or module:callable")
    p.add_argument("--seq-len", type=int, default=4096, metavar="TOKENS", help="sequence length (default 4096)")
    p.add_argument("--global-batch", type=int, default=1024, metavar="SEQUENCES",
                   help="sequences per optimizer step, all data-parallel ranks together (default 1024)")
    p.add_argument("--micro-batch", type=int, metavar="SEQUENCES", help="fix the micro-batch (default: searched)")
    p.add_argument("--cluster", metavar="NAME[:DEVICES]", help="the target cluster (`--clusters` lists them); "
                   "DEVICES defaults to one scale-up domain")
    p.add_argument("--compare", metavar="NAME[:DEVICES]", help="a second cluster planned beside the target")
    p.add_argument("--layout", metavar="SPEC", help="evaluate one layout: dp=..,tp=..,pp=..,cp=..,ep=..,"
                   "zero=0|1|2|3,recompute=none|selective|full[,micro_batch=..,vpp=..]; a partial spec fixes "
                   "those degrees and searches the rest")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16", "fp8"), help="compute dtype whose peak "
                   "is used (default bf16; chips without a published bf16 peak fall back to fp8, said in the notes)")
    p.add_argument("--assumptions", type=Path, metavar="FILE", help="YAML overriding auditor/plan/assumptions.yaml")
    p.add_argument("--trace-facts", choices=("auto", "on", "off"), default="auto",
                   help="measure FLOPs and per-op intensity on fake tensors (auto: dense models yes, MoE no)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="time limit for the trace")
    p.add_argument("--clusters", action="store_true", help="list the cluster profiles and exit")
    p.add_argument("--format", choices=FORMATS, default="console", help="output format (default console)")
    p.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the plan to FILE instead of stdout")


def run_cli(args, usage_error: type[Exception]) -> int:
    from auditor.plan import PlanError, run

    if args.path is not None and not args.path.exists():
        raise usage_error(f"no such file: {args.path}")
    try:
        if args.output:
            try:
                stream = open(args.output, "w", encoding="utf-8")
            except OSError as exc:
                raise usage_error(f"cannot write {args.output}: {exc.strerror or exc}") from None
            with stream:
                return run(args, stream)
        return run(args, sys.stdout)
    except PlanError as exc:
        raise usage_error(str(exc)) from None
