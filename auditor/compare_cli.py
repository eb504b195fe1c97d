"""The `audit compare` and `audit stages` subcommands (their logic: auditor/compare.py, auditor/stages.py)."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from auditor.errors import UsageError

EXIT_OK, EXIT_FINDINGS = 0, 1   # as auditor.cli (ruff's habit)


def add_compare_parser(sub, formats) -> None:
    p = sub.add_parser("compare", help="compare two --execute --dump folders module by module (msprobe's thresholds)",
                       description="Compare two dumps written by `audit FILE --execute --dump DIR`: the first "
                                   "module that diverges on matching inputs, loss curves, step time and memory. "
                                   "DIR_A is the baseline (GPU, fp32), DIR_B the candidate (NPU, bf16).")
    p.add_argument("dir_a", type=Path, metavar="DIR_A", help="the baseline dump")
    p.add_argument("dir_b", type=Path, metavar="DIR_B", help="the candidate dump")
    p.add_argument("--format", choices=formats, default="console", help="output format (default: console)")
    p.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--fail-on", choices=("error", "warning", "info", "never"), default="error",
                   help="exit 1 when a finding at or above this severity exists (default: error)")
    p.add_argument("--max-time-ratio", type=float, metavar="R", help="warn when the candidate's step time is above R "
                   "times the baseline's (default 1.5)")
    p.add_argument("--max-memory-ratio", type=float, metavar="R", help="warn when the candidate's peak device memory "
                   "is above R times the baseline's (default 1.2)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="console colours")


def add_stages_parser(sub) -> None:
    from auditor.stages import MODEL_SIZES

    p = sub.add_parser("stages", help="print the staged-migration checklist (single card, one node, multi-node)",
                       description="A markdown checklist per migration stage: the exact commands (this tool's, "
                                   "torch_npu's, msprobe's), what to record, the pass criteria, and the "
                                   "environment to set, from the tables in op_tables/.")
    p.add_argument("--model-size", required=True, metavar="SIZE",
                   help=f"parameters, e.g. 7b, 13b, 350m ({', '.join(MODEL_SIZES)} or any NUMBER[mb])")
    p.add_argument("--product", default="a2", metavar="NAME", help="target Ascend product (a2, a3, 950, 910a, 310p; default a2)")
    p.add_argument("--nodes", type=int, default=1, metavar="N", help="machines in the final job (default 1)")
    p.add_argument("--cards-per-node", type=int, default=8, metavar="N", help="NPUs per machine (default 8)")
    p.add_argument("--entry", default="train.py", metavar="FILE", help="the training script the commands name (default train.py)")
    p.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the markdown to FILE instead of stdout")


def cmd_compare(args: argparse.Namespace) -> int:
    from auditor.compare import DEFAULT_MEMORY_RATIO, DEFAULT_TIME_RATIO, CompareError, CompareOptions, compare_dumps
    from auditor.findings import assign_fingerprints, at_or_above
    from auditor.report import Report, emit
    from auditor.rules import rules_by_code

    for flag, value in (("--max-time-ratio", args.max_time_ratio), ("--max-memory-ratio", args.max_memory_ratio)):
        if value is not None and value <= 0:
            raise UsageError(f"{flag} must be positive")
    options = CompareOptions(max_time_ratio=args.max_time_ratio or DEFAULT_TIME_RATIO,
                             max_memory_ratio=args.max_memory_ratio or DEFAULT_MEMORY_RATIO)
    started = time.perf_counter()
    try:
        findings, section = compare_dumps(args.dir_a, args.dir_b, options)
    except CompareError as exc:
        raise UsageError(str(exc)) from exc
    findings = assign_fingerprints(findings)
    report = Report(root=str(Path.cwd()), target=None, findings=findings, errors=[],
                    duration_s=time.perf_counter() - started, sections={"compare": section})
    color = {"always": True, "never": False}.get(args.color)
    rules = rules_by_code()
    if args.output:
        try:
            stream = open(args.output, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
        with stream:
            emit(report, args.format, stream, rules=rules, color=False if color is None else color)
    else:
        emit(report, args.format, sys.stdout, rules=rules, color=color)
    if args.fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if any(at_or_above(f.severity, args.fail_on) for f in findings) else EXIT_OK


def cmd_stages(args: argparse.Namespace) -> int:
    from auditor.stages import StagesError, checklist

    try:
        text = checklist(args.model_size, args.product, nodes=args.nodes, cards_per_node=args.cards_per_node,
                         entry=args.entry)
    except StagesError as exc:
        raise UsageError(str(exc)) from exc
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    else:
        sys.stdout.write(text)
    return EXIT_OK
