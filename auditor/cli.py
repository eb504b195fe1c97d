"""`audit`: the command line. Exit codes (ruff's habit): 0 nothing at or above --fail-on, 1 findings at or
above it, 2 usage or input error."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence, TextIO

from auditor import TOOL_NAME, __version__

SUBCOMMANDS = ("check", "explain", "rules", "ops", "fix", "tables")
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad flags, paths or config: message to stderr, exit 2."""


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
                       help="files or folders to audit (none needed with --hf-config)")
    check.add_argument("--format", choices=FORMATS, default="console", help="output format (default: console)")
    check.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                       help="exit 1 when a finding at or above this severity exists (default: error)")
    check.add_argument("--select", metavar="CODES", help="comma-separated rule codes, code prefixes or categories to report")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes, code prefixes or categories to drop")
    check.add_argument("--exclude", metavar="GLOBS", help="comma-separated globs of files or folders to skip")
    check.add_argument("--config", type=Path, metavar="FILE", help="pyproject.toml to read [tool.npu-audit] from "
                       "(default: the nearest one above the first PATH)")
    check.add_argument("--full", action="store_true",
                       help="console and markdown: every finding on its own (default: one entry per file and "
                            "decision, with its count and lines); JSON, SARIF, CSV and GitHub always list every one")
    check.add_argument("--statistics", action="store_true", help="print counts per rule (fixable or not) instead of findings")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="report only findings not in this baseline")
    check.add_argument("--write-baseline", type=Path, metavar="FILE", help="write every current finding to FILE as the baseline and exit 0")
    check.add_argument("--cache-dir", type=Path, metavar="DIR", help=f"result cache folder (default: ./{'.npu-audit-cache'})")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    check.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: the CPU count)")
    check.add_argument("--max-file-size", type=float, default=8.0, metavar="MB", help="skip (and report) larger files (default 8)")
    check.add_argument("--no-progress", action="store_true", help="no progress bar on large trees")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="console colours")
    _add_target_flags(check)
    dyn = check.add_argument_group("dynamic analysis (runs your code, in a child process)")
    dyn.add_argument("--trace", action="store_true", help="trace one training step on fake tensors (no weights, no GPU)")
    dyn.add_argument("--execute", action="store_true", help="run one real step: on the NPU when present, else bf16/fp16 numerics on the CPU")
    dyn.add_argument("--entry", metavar="NAME", help="entry function (default audit_entry) or module:callable")
    dyn.add_argument("--hf-config", type=Path, metavar="CONFIG_JSON", help="build a transformers model from a local config.json")
    dyn.add_argument("--amp", choices=("bf16", "fp16"), help="autocast dtype for the traced / executed forward")
    dyn.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="time limit for user code (default 300)")
    dyn.add_argument("--device", choices=("cpu", "npu"), help="execute mode: where to run (default: npu when available)")

    explain = sub.add_parser("explain", help="print a rule's documentation page")
    explain.add_argument("code", help="rule code (NPU001) or name (cuda-tensor-method)")

    rules = sub.add_parser("rules", help="list all rules")
    rules.add_argument("--format", choices=("text", "json"), default="text")

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
    _add_target_flags(fix)

    tables = sub.add_parser("tables", help="coverage tables: `audit tables build` regenerates op_tables/")
    tables.add_argument("action", choices=("build",))
    tables.add_argument("--ascend-dir", type=Path, help="snapshots of Ascend's published data (default ../shared/ascend)")
    tables.add_argument("--out", type=Path, help="output folder (default: op_tables/)")
    return parser


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def _resolve_target(torch_npu: str | None, product: str | None):
    from auditor.target import TargetError, resolve_target

    try:
        return resolve_target(torch_npu, product)
    except TargetError as exc:
        raise UsageError(str(exc)) from exc


# -- check -------------------------------------------------------------------------------------------

def _progress_bar(enabled: bool):
    """A rich progress bar on stderr for large trees; a no-op when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("auditing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task("audit", total=None)

    def update(done: int, total: int) -> None:
        if total >= 200:
            if not progress.live.is_started:
                progress.start()
            progress.update(task, completed=done, total=total)
    return progress, update


def cmd_check(args: argparse.Namespace) -> int:
    import time

    from auditor.config import ConfigError, find_pyproject, load_config, read_baseline, write_baseline
    from auditor.findings import assign_fingerprints, at_or_above
    from auditor.report import Report, emit
    from auditor.rules import rules_by_code
    from auditor.runner import StaticRun, run_static

    if not args.paths and not args.hf_config:
        raise UsageError("give at least one PATH to audit (or --hf-config CONFIG_JSON with --trace)")
    missing = [str(p) for p in args.paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.max_file_size <= 0:
        raise UsageError("--max-file-size must be positive")
    try:
        config = load_config(args.config if args.config else find_pyproject(args.paths[0] if args.paths else Path.cwd()))
        if args.config and not args.config.is_file():
            raise ConfigError(f"config file {args.config} does not exist")
        baseline = read_baseline(args.baseline) if args.baseline else None
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if args.select:
        config.select = _split(args.select)
    config.ignore += _split(args.ignore)
    fail_on = args.fail_on or config.fail_on
    target = _resolve_target(args.torch_npu or config.torch_npu, args.product or config.product)
    rules = rules_by_code()

    coverage_apis = None
    if any("coverage" in r.match and config.rule_enabled(r) for r in rules.values()):
        coverage_apis = unsupported_api_details(target)

    cache_dir = None
    if not args.no_cache:
        cache_dir = args.cache_dir or (Path(config.cache_dir) if config.cache_dir else Path.cwd() / ".npu-audit-cache")
    progress, update = _progress_bar(not args.no_progress and args.format == "console")
    started = time.perf_counter()
    try:
        run = StaticRun(root=args.hf_config.resolve().parent) if not args.paths else run_static(
            list(args.paths), product=target.product, coverage_apis=coverage_apis,
            cache_key_parts=(target.torch_npu,), exclude=tuple(config.exclude) + tuple(_split(args.exclude)),
            jobs=args.jobs, cache_dir=cache_dir, max_bytes=int(args.max_file_size * 1024 * 1024), progress=update)
    finally:
        if progress is not None and progress.live.is_started:
            progress.stop()

    findings = [f for r in run.results for f in r.findings]
    errors = list(run.errors)
    sections: dict = {}
    inline_suppressed = sum(r.suppressed for r in run.results)
    if args.trace or args.execute or args.hf_config:
        findings, errors, sections, dropped = _dynamic(args, run.root, target, findings, errors)
        inline_suppressed += dropped

    findings = [f for f in findings if config.code_enabled(f, rules) and not config.ignored_in_file(f)]
    findings = assign_fingerprints(findings)
    if args.write_baseline:
        write_baseline(args.write_baseline, findings)
        print(f"wrote {len(findings)} findings to the baseline {args.write_baseline}", file=sys.stderr)
        return EXIT_OK
    suppressed_by_baseline = 0
    if baseline is not None:
        kept = [f for f in findings if f.fingerprint not in baseline]
        suppressed_by_baseline = len(findings) - len(kept)
        findings = kept

    report = Report(
        root=str(run.root), target=target, findings=findings, errors=errors,
        files_scanned=len(run.results), lines_scanned=sum(r.lines for r in run.results),
        duration_s=time.perf_counter() - started, baseline_suppressed=suppressed_by_baseline,
        inline_suppressed=inline_suppressed, sections=sections)
    color = {"always": True, "never": False}.get(args.color)   # None: the emitter detects (NO_COLOR, a tty)
    _write_report(report, args, rules, color)
    if fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if any(at_or_above(f.severity, fail_on) for f in findings) else EXIT_OK


def unsupported_api_details(target) -> dict[str, dict]:
    """torch.* APIs the tables mark unsupported on the target, with the message and substitution the
    static pass's coverage rule (NPU501) reports for each."""
    from auditor.coverage import Coverage

    return {
        name: {"message": f"`{name}` is not supported on {target.describe()}"
                          + (f": {ans.notes}" if ans.notes else "") + f" (source: {ans.source})",
               "substitution": ans.substitute}
        for name, ans in Coverage.load(target).unsupported_apis().items()}


def _write_report(report, args, rules, color) -> None:
    from auditor.report import emit

    report.full = bool(getattr(args, "full", False))
    stream: TextIO
    if args.output:
        try:
            stream = open(args.output, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
        with stream:
            emit(report, args.format, stream, rules=rules, color=False if color is None else color,
                 statistics=args.statistics)
    else:
        emit(report, args.format, sys.stdout, rules=rules, color=color, statistics=args.statistics)


def _dynamic(args, root: Path, target, findings, errors):
    """Trace and/or execute the user's entry; merge their findings with the static ones."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise UsageError("--trace, --execute and --hf-config run your model and need PyTorch: "
                         "pip install 'npu-audit[trace]' (the static audit does not)")
    sections: dict = {}
    source = None
    if args.paths and args.paths[0].is_file():
        source = args.paths[0]
    elif not args.hf_config:
        raise UsageError("--trace / --execute need one Python file with an entry function, or --hf-config")
    base = root if root.is_dir() else root.parent
    common = dict(root=base, entry=args.entry, hf_config=args.hf_config, amp=args.amp, timeout=args.timeout, target=target)
    if args.trace or (args.hf_config and not args.execute):
        from auditor.trace import trace_findings

        f, e, section = trace_findings(source, **common)
        findings, errors = _merge(findings, f), errors + e
        sections["trace"] = section
    if args.execute:
        from auditor.device import DeviceUnavailable
        from auditor.execute import execute_findings

        try:
            f, e, section = execute_findings(source, device=args.device, **common)
        except DeviceUnavailable as exc:
            raise UsageError(str(exc)) from exc
        findings, errors = _merge(findings, f), errors + e
        sections["execute"] = section
    kept, dropped = _drop_suppressed(findings, base)
    return kept, errors, sections, dropped


def _merge(static, dynamic):
    """One report: a dynamic finding that names the same line and symbol as a static one is dropped."""
    seen = {(f.path, f.line, f.symbol) for f in static}
    return static + [f for f in dynamic if (f.path, f.line, f.symbol) not in seen]


def _drop_suppressed(findings, base: Path):
    """The inline comment that silences a static finding silences a trace or execute finding too."""
    from auditor.static.engine import suppressed

    lines_of: dict[str, list[str]] = {}
    kept, dropped = [], 0
    for f in findings:
        if f.source != "static":
            if f.path not in lines_of:
                try:
                    lines_of[f.path] = (base / f.path).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    lines_of[f.path] = []
            if suppressed(lines_of[f.path], f.line, f.end_line, f.code):
                dropped += 1
                continue
        kept.append(f)
    return kept, dropped


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

    from auditor.rules import load_rules

    rules = load_rules()
    if args.format == "json":
        json.dump([{"code": r.code, "name": r.name, "category": r.category, "severity": r.severity,
                    "effort": r.effort, "fix": r.fix, "default_on": r.default_on, "summary": r.doc["what"]}
                   for r in rules], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return EXIT_OK
    for r in rules:
        sev = r.severity if isinstance(r.severity, str) else "/".join(f"{k}:{v}" for k, v in r.severity.items())
        flag = "" if r.default_on else "  (off by default)"
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
    handler = {"check": cmd_check, "explain": cmd_explain, "rules": cmd_rules, "ops": cmd_ops,
               "fix": cmd_fix, "tables": cmd_tables}[args.command]
    from auditor.rules import RuleError

    try:
        return handler(args)
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
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
