"""`audit`: the command line.

Exit codes: 0 a complete audit with nothing at or above --fail-on; 1 findings at or above it; 2 a usage or
config error, a --trace / --execute run that did not complete, or (when no finding fails the gate) a file
that could not be audited (syntax, encoding, unreadable, too large, special file, unknown code in a
suppression comment), unless --ignore-errors."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence, TextIO

from auditor import TOOL_NAME, __version__
from auditor.errors import UsageError

SUBCOMMANDS = ("check", "explain", "rules", "ops", "fix", "tables", "plan", "compare", "stages")
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _add_target_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--torch-npu", metavar="VERSION", help="target torch_npu release or line (2.5.1, v2.14); default: newest")
    p.add_argument("--product", metavar="NAME", help="target Ascend product: a2 (910b), a3 (910c, 910_93), 950, 910a, 310p; default a2")


def build_parser() -> argparse.ArgumentParser:
    from auditor.report import FORMATS

    parser = argparse.ArgumentParser(
        prog="audit",
        description="Find what must change when CUDA PyTorch code moves to Huawei Ascend NPUs "
                    "(torch_npu, CANN, HCCL). `audit PATH` is short for `audit check PATH`.",
    )
    parser.add_argument("--version", action="version", version=f"{TOOL_NAME} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="audit files or folders (the default command)",
                           description="Audit Python files, folders or whole repositories.")
    check.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                       help="files or folders to audit (default: the current folder; none with --hf-config)")
    check.add_argument("--format", choices=FORMATS, default="console", help="output format (default: console)")
    check.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                       help="exit 1 when a finding at or above this severity exists (default: error)")
    check.add_argument("--select", metavar="CODES", help="comma-separated rule codes, code prefixes or categories to report")
    check.add_argument("--extend-select", metavar="CODES", help="rule codes, prefixes or categories to add to the selection")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes, code prefixes or categories to drop")
    check.add_argument("--exclude", metavar="GLOBS", help="comma-separated globs of files or folders to skip")
    check.add_argument("--no-respect-gitignore", action="store_true",
                       help="also audit files that .gitignore excludes (they are skipped by default)")
    check.add_argument("--ignore-errors", action="store_true",
                       help="files that cannot be audited are reported but do not make the exit code 2")
    check.add_argument("--config", type=Path, metavar="FILE", help="pyproject.toml to read [tool.npu-audit] from "
                       "(default: the nearest one above the first PATH)")
    check.add_argument("--full", action="store_true",
                       help="console and markdown: every finding on its own (default: one entry per file and "
                            "decision, with its count and lines); JSON, SARIF, CSV and GitHub always list every one")
    check.add_argument("--statistics", action="store_true", help="print counts per rule (fixable or not) instead of findings")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="report only findings not in this baseline")
    check.add_argument("--write-baseline", type=Path, metavar="FILE", help="write every current finding to FILE as the baseline and exit 0")
    check.add_argument("--cache-dir", type=Path, metavar="DIR", help="result cache folder (default: .npu-audit-cache "
                       "in the project root, found by pyproject.toml or .git; else the user cache folder)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    check.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default and maximum: the CPU count)")
    check.add_argument("--max-file-size", type=float, default=8.0, metavar="MB", help="skip (and report) larger files (default 8)")
    check.add_argument("--no-progress", action="store_true", help="no progress bar on large trees")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="console colours")
    _add_target_flags(check)
    dyn = check.add_argument_group("dynamic analysis (runs your code, in a child process)")
    dyn.add_argument("--trace", action="store_true", help="trace one training step on fake tensors (no weights, no GPU)")
    dyn.add_argument("--execute", action="store_true", help="run one real step: on the NPU when present, else bf16/fp16 numerics on the CPU")
    dyn.add_argument("--entry", metavar="NAME", help="entry function (default audit_entry) or module:callable")
    dyn.add_argument("--hf-config", type=Path, metavar="CONFIG_JSON", help="build a transformers model from a local config.json")
    dyn.add_argument("--amp", choices=("bf16", "fp16", "fp32"), help="autocast dtype for the traced / executed forward "
                     "(fp32, no autocast: with --dump only)")
    dyn.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="time limit for user code (default 300)")
    dyn.add_argument("--device", choices=("cpu", "npu", "cuda"), help="execute mode: where to run (default: npu when available)")
    dyn.add_argument("--dump", type=Path, metavar="DIR", help="execute mode: record the steps module by module into DIR "
                     "instead of judging them (compare two dumps with `audit compare`)")
    dyn.add_argument("--steps", type=int, default=1, metavar="K", help="with --dump: training steps to record (default 1)")
    dyn.add_argument("--dump-tensors", action="store_true", help="with --dump: also save every recorded tensor in full")
    dyn.add_argument("--inputs", type=Path, metavar="FILE", help="with --dump: run on these inputs (another dump's "
                     "inputs.pt) instead of the entry's")
    dyn.add_argument("--world-size", type=int, metavar="N", help="--trace as rank 0 of an N-rank job on the fake process "
                     "group: records every collective and checks it against HCCL")
    dyn.add_argument("--mesh", metavar="DIMS", help="with --world-size: the device mesh, e.g. dp=2,tp=4 (passed to audit_entry)")
    dyn.add_argument("--rank", type=int, default=0, metavar="R", help="with --world-size: the rank to trace (default 0)")
    dyn.add_argument("--seq-len", type=_positive, metavar="N", help="--hf-config inputs: tokens per sequence (default 2048, capped by the config)")
    dyn.add_argument("--batch", type=_positive, metavar="N", help="--hf-config inputs: sequences per step (default 1)")
    dyn.add_argument("--layers", type=_layers, metavar="N|all", help="trace N blocks of each kind of repeated block, "
                     "scaled to the full depth (default: 1 for --hf-config, all otherwise)")

    explain = sub.add_parser("explain", help="print a rule's documentation page")
    explain.add_argument("code", help="rule code (NPU001) or name (cuda-tensor-method)")

    rules = sub.add_parser("rules", help="list all rules (or check the rule files with --check)")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rules.add_argument("--check", action="store_true",
                       help="validate every rule file against the schema; print file:line for each problem, exit 1")

    ops = sub.add_parser("ops", help="answer from the coverage tables: is this op / API / collective supported?")
    _add_target_flags(ops)
    try:
        from auditor.coverage import ops_cmd
        ops_cmd.add_arguments(ops)
    except ImportError:
        ops.add_argument("symbols", nargs="*")

    fix = sub.add_parser("fix", help="apply the mechanical part of a port with libcst codemods")
    fix.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    fix.add_argument("--diff", action="store_true", help="print a unified diff (the default)")
    fix.add_argument("--write", action="store_true", help="apply the fixes to the files")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change behaviour or need review")
    fix.add_argument("--select", metavar="CODES")
    fix.add_argument("--ignore", metavar="CODES")
    fix.add_argument("--max-file-size", type=float, default=8.0, metavar="MB", help="skip (and report) larger files (default 8)")
    _add_target_flags(fix)

    plan = sub.add_parser("plan", help="will the model fit on a cluster, how to lay it out, what it reaches",
                          description="Plan training on a GPU or Ascend cluster: model facts, layouts searched, "
                                      "memory, communication and step time per layout (docs/plan.md).")
    from auditor.plan.cli import add_arguments as add_plan_arguments
    add_plan_arguments(plan)

    from auditor.compare_cli import add_compare_parser, add_stages_parser

    add_compare_parser(sub, FORMATS)
    add_stages_parser(sub)

    tables = sub.add_parser("tables", help="coverage tables: `audit tables build` regenerates op_tables/")
    tables.add_argument("action", choices=("build",))
    tables.add_argument("--ascend-dir", type=Path, help="snapshots of Ascend's published data (default ../shared/ascend)")
    tables.add_argument("--out", type=Path, help="output folder (default: op_tables/)")
    return parser


def _resolve_target(torch_npu: str | None, product: str | None):
    from auditor.target import TargetError, resolve_target

    try:
        return resolve_target(torch_npu, product)
    except TargetError as exc:
        raise UsageError(str(exc)) from exc


# -- check -------------------------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    """Validate the flags, merge them with the config, run the pipeline, write the report or baseline."""
    from auditor.cache import default_cache_dir
    from auditor.config import (ConfigError, check_selectors, find_pyproject, load_config, read_baseline,
                                split_codes, write_baseline)
    from auditor.pipeline import collect, make_report
    from auditor.rules import load_rules, rules_by_code

    if not args.paths and not args.hf_config:
        args.paths = [Path(".")]                  # as ruff: no path audits the current folder
    missing = [str(p) for p in args.paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.max_file_size <= 0:
        raise UsageError("--max-file-size must be positive")
    if (args.world_size is not None or args.mesh or args.rank) and not args.trace:
        raise UsageError("--world-size and --mesh go with --trace (they run your entry as one rank of a job)")
    _check_dump_flags(args)
    try:
        if args.config and not args.config.is_file():
            raise ConfigError(f"config file {args.config} does not exist")
        config = load_config(args.config if args.config else find_pyproject(args.paths[0] if args.paths else Path.cwd()),
                             explicit=bool(args.config))
        baseline = read_baseline(args.baseline) if args.baseline else None
        catalogue = load_rules()
        for flag, value in (("--select", args.select), ("--extend-select", args.extend_select),
                            ("--ignore", args.ignore)):
            check_selectors(split_codes(value), catalogue, flag)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if config.unread:
        print(f"audit: warning: {config.unread}", file=sys.stderr)
    if args.select:
        config.select = split_codes(args.select)
    config.extend_select += split_codes(args.extend_select)
    config.ignore += split_codes(args.ignore)
    fail_on = args.fail_on or config.fail_on
    target = _resolve_target(args.torch_npu or config.torch_npu, args.product or config.product)

    cache_dir = None
    if not args.no_cache:
        cache_dir = args.cache_dir or config.resolved_cache_dir() or \
            default_cache_dir(args.paths[0] if args.paths else Path.cwd())
    collected = collect(args, config, target, cache_dir=cache_dir,
                        show_progress=not args.no_progress and args.format == "console",
                        note=lambda message: print(f"audit: {message}", file=sys.stderr))
    if args.write_baseline:
        try:
            write_baseline(args.write_baseline, collected.findings)
        except ConfigError as exc:
            raise UsageError(str(exc)) from exc
        print(f"wrote {len(collected.findings)} findings to the baseline {args.write_baseline}", file=sys.stderr)
        return EXIT_OK
    report = make_report(collected, target, baseline)
    color = {"always": True, "never": False}.get(args.color)   # None: the emitter detects (NO_COLOR, a tty)
    _write_report(report, args, rules_by_code(), color)
    return _exit_code(report.findings, report.errors, fail_on, ignore_errors=args.ignore_errors or config.ignore_errors)


# Errors that do not mean "a file was not audited": the folder's files are reached another way.
_HARMLESS_ERRORS = ("symlink-loop",)
_DYNAMIC_ERRORS = ("trace", "execute")


def _exit_code(findings, errors, fail_on: str, ignore_errors: bool) -> int:
    """0 / 1 / 2 as the module docstring says; the reason for a 2 goes to stderr."""
    from auditor.findings import at_or_above

    dynamic = [e for e in errors if e.kind in _DYNAMIC_ERRORS]
    if dynamic:
        first = dynamic[0].message.splitlines()[0] if dynamic[0].message else dynamic[0].kind
        print(f"audit: error: --{dynamic[0].kind} did not complete: {first}", file=sys.stderr)
        return EXIT_USAGE
    unknown = [e for e in errors if e.kind == "suppression"]
    if unknown:       # an unknown code in a suppression comment is a usage error, like one in --select
        print(f"audit: error: {unknown[0].path}:{unknown[0].line}: {unknown[0].message}", file=sys.stderr)
        return EXIT_USAGE
    if fail_on != "never" and any(at_or_above(f.severity, fail_on) for f in findings):
        return EXIT_FINDINGS
    unaudited = [e for e in errors if e.kind not in _HARMLESS_ERRORS + _DYNAMIC_ERRORS]
    if unaudited and not ignore_errors:
        print(f"audit: error: {len(unaudited)} file{'s' if len(unaudited) != 1 else ''} could not be audited "
              f"(first: {unaudited[0].path}: {unaudited[0].kind}); exit 2 (--ignore-errors to accept)",
              file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _write_report(report, args, rules, color) -> None:
    from auditor.report import emit

    report.full = bool(getattr(args, "full", False))
    stream: TextIO
    if args.output:
        try:
            stream = open(args.output, "w", encoding="utf-8", newline="")
            with stream:
                emit(report, args.format, stream, rules=rules, color=False if color is None else color,
                     statistics=args.statistics)
        except OSError as exc:          # a missing folder, a full disk (/dev/full), a read-only file
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    else:
        emit(report, args.format, sys.stdout, rules=rules, color=color, statistics=args.statistics)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
    return int(text)


def _layers(text: str) -> int | str:
    return "all" if text == "all" else _positive(text)


def _check_dump_flags(args) -> None:
    """--dump belongs to --execute; --steps / --dump-tensors / --inputs / --amp fp32 belong to --dump."""
    if args.dump and not args.execute:
        raise UsageError("--dump records an --execute run: add --execute")
    if not args.dump:
        extra = [flag for flag, on in (("--steps", args.steps != 1), ("--dump-tensors", args.dump_tensors),
                                       ("--inputs", args.inputs is not None), ("--amp fp32", args.amp == "fp32")) if on]
        if extra:
            raise UsageError(f"{', '.join(extra)} only apply with --execute --dump DIR")
    elif args.steps < 1:
        raise UsageError("--steps must be at least 1")


# -- the small commands ----------------------------------------------------------------------------

def cmd_explain(args: argparse.Namespace) -> int:
    from auditor.explain import render_rule
    from auditor.rules import find_rule

    rule = find_rule(args.code)
    if rule is None:
        raise UsageError(f"no rule {args.code!r}; `audit rules` lists them")
    sys.stdout.write(render_rule(rule))
    return EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from auditor.rules import check_rule_files, load_rules

    if args.check:
        problems = check_rule_files()
        for line in problems:
            print(line)
        print(f"{len(problems)} problem{'s' * (len(problems) != 1)} in the rule files", file=sys.stderr)
        return EXIT_FINDINGS if problems else EXIT_OK
    rules = load_rules()
    if args.format == "json":
        json.dump([{"code": r.code, "name": r.name, "category": r.category, "severity": r.severity,
                    "effort": r.effort, "fix": r.fix, "default_on": r.default_on, "status": r.status,
                    "summary": r.doc["what"]}
                   for r in rules], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return EXIT_OK
    for r in rules:
        sev = r.severity if isinstance(r.severity, str) else "/".join(f"{k}:{v}" for k, v in r.severity.items())
        flag = f"  ({r.status})" if r.status != "stable" else ("" if r.default_on else "  (off by default)")
        print(f"{r.code}  {r.name:<36} {r.category:<12} {sev:<10} fix={r.fix:<6} {r.doc['what'].splitlines()[0]}{flag}")
    return EXIT_OK


def cmd_ops(args: argparse.Namespace) -> int:
    from auditor.coverage import ops_cmd

    return ops_cmd.run(args, _resolve_target(args.torch_npu, args.product))


def cmd_fix(args: argparse.Namespace) -> int:
    from auditor.fix.cli import run_fix

    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    return run_fix(args, _resolve_target(args.torch_npu, args.product))


def cmd_tables(args: argparse.Namespace) -> int:
    from auditor.coverage.build import build_cli

    return build_cli(args)


def cmd_plan(args: argparse.Namespace) -> int:
    from auditor.plan.cli import run_cli

    return run_cli(args, UsageError)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv.insert(0, "check")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:          # argparse: usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from auditor.compare_cli import cmd_compare, cmd_stages

    handler = {"check": cmd_check, "explain": cmd_explain, "rules": cmd_rules, "ops": cmd_ops,
               "fix": cmd_fix, "tables": cmd_tables, "plan": cmd_plan, "compare": cmd_compare,
               "stages": cmd_stages}[args.command]
    from auditor.procs import Terminated, terminate_on_signals
    from auditor.rules import RuleError

    try:
        with terminate_on_signals():    # SIGTERM / SIGHUP unwind like Ctrl-C: children are stopped
            code = handler(args)
            sys.stdout.flush()           # a full disk behind stdout is an error here, not at exit
            return code
    except Terminated as exc:
        print(f"audit: {exc}", file=sys.stderr)
        return 128 + exc.signum
    except RuleError as exc:
        print(f"audit: error: the rule catalogue is invalid: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as exc:
        print(f"audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except OSError as exc:              # stdout on a full disk (`audit > /dev/full`), and the like
        where = f" {exc.filename}" if getattr(exc, "filename", None) else " the report"
        print(f"audit: error: cannot write{where}: {exc.strerror or exc}", file=sys.stderr)
        _quiet_stdout()
        return EXIT_USAGE


def _quiet_stdout() -> None:
    """After a write to stdout failed, point it at /dev/null so the interpreter's final flush is silent."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
