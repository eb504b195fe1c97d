"""The pipeline behind `audit check`: discover -> stages -> findings -> report.

Stages: the static pass over Python and project files (auditor.runner: discovery, cache, worker
processes), then, when asked, the trace and / or the real step of the entry (auditor.trace,
auditor.execute, each in a child process). Their findings merge into one list, which the config's and the
flags' selection filters and auditor.findings fingerprints; the baseline drops known ones; the result is
the Report that an emitter writes (auditor.report). auditor.cli parses the flags, merges them with the
config, writes the report or the baseline, and turns the result into an exit code.

`args` below is the parsed `audit check` namespace (see auditor.cli.build_parser)."""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from auditor.errors import UsageError
from auditor.findings import FileError, Finding


@dataclass
class Collected:
    """What the stages found, selected and fingerprinted, before the baseline."""
    root: Path
    findings: list[Finding]
    errors: list[FileError]
    files_scanned: int
    lines_scanned: int
    inline_suppressed: int
    started: float                                     # time.perf_counter() when the static pass began
    sections: dict[str, Any] = field(default_factory=dict)
    collectives: list | None = None


def collect(args: argparse.Namespace, config, target, *, cache_dir: Path | None, show_progress: bool,
            note: Callable[[str], None]) -> Collected:
    """Run the stages `args` asks for on its paths and return the selected, fingerprinted findings."""
    from auditor.config import split_codes
    from auditor.coverage import unsupported_api_details
    from auditor.findings import assign_fingerprints
    from auditor.rules import rules_by_code
    from auditor.runner import StaticRun, run_static

    rules = rules_by_code()
    coverage_apis = None
    if any("coverage" in r.match and config.rule_enabled(r) for r in rules.values()):
        coverage_apis = unsupported_api_details(target)

    progress, update = _progress_bar(show_progress)
    started = time.perf_counter()
    try:
        run = StaticRun(root=args.hf_config.resolve().parent) if not args.paths else run_static(
            list(args.paths), product=target.product, coverage_apis=coverage_apis,
            cache_key_parts=(target.torch_npu,), exclude=tuple(config.exclude) + tuple(split_codes(args.exclude)),
            respect_gitignore=config.respect_gitignore and not args.no_respect_gitignore,
            jobs=args.jobs, cache_dir=cache_dir, max_bytes=int(args.max_file_size * 1024 * 1024), progress=update,
            note=note)
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
    collectives = sections["collectives"].pop("calls", None) if "collectives" in sections else None

    base = run.root if run.root.is_dir() else run.root.parent
    findings = [f for f in findings if config.code_enabled(f, rules) and not config.ignored_in_file(f, base)]
    findings = assign_fingerprints(findings, key_path=_project_path(base, config))
    return Collected(root=run.root, findings=findings, errors=errors, files_scanned=len(run.results),
                     lines_scanned=sum(r.lines for r in run.results), inline_suppressed=inline_suppressed,
                     started=started, sections=sections, collectives=collectives)


def make_report(collected: Collected, target, baseline: set[str] | None):
    """The Report of a run: its findings less those whose fingerprint is in the baseline."""
    from auditor.report import Report

    findings = collected.findings
    suppressed_by_baseline = 0
    if baseline is not None:
        kept = [f for f in findings if f.fingerprint not in baseline]
        suppressed_by_baseline = len(findings) - len(kept)
        findings = kept
    return Report(
        root=str(collected.root), target=target, findings=findings, errors=collected.errors,
        files_scanned=collected.files_scanned, lines_scanned=collected.lines_scanned,
        duration_s=time.perf_counter() - collected.started, baseline_suppressed=suppressed_by_baseline,
        inline_suppressed=collected.inline_suppressed, sections=collected.sections,
        collectives=collected.collectives)


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


def _project_path(base: Path, config):
    """Maps a report path to the path below the project root (the config file's folder, else the
    repository root, else the report base), so baseline fingerprints do not depend on the path given
    on the command line or on the current folder."""
    import os

    if config.source is not None:
        project = config.source.resolve().parent
    else:
        project = next((f for f in (base.resolve(), *base.resolve().parents) if (f / ".git").exists()), base.resolve())

    def key(path: str) -> str:
        try:
            return Path(os.path.abspath(base / path)).relative_to(project).as_posix()
        except ValueError:
            return path
    return key


# -- the dynamic stages -------------------------------------------------------------------------------

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
    layout = _layout(args)
    if args.trace or (args.hf_config and not args.execute):
        from auditor.trace import trace_findings

        f, e, section = trace_findings(source, distributed=layout, **common, seq_len=args.seq_len, batch=args.batch,
                                       layers=args.layers)
        findings, errors = _merge(findings, f), errors + e
        if isinstance(section, dict) and "collectives" in section:
            sections["collectives"] = section.pop("collectives")
        sections["trace"] = section
    if args.execute:
        from auditor.device import DeviceUnavailable
        from auditor.execute import execute_findings

        try:
            if args.dump:
                from auditor.execute.dump import dump_findings

                f, e, section = dump_findings(source, device=args.device, out=args.dump, steps=args.steps,
                                              keep_tensors=args.dump_tensors, inputs=args.inputs, **common)
                findings, errors = _merge(findings, f), errors + e
                sections["execute-dump"] = section
                kept, dropped = _drop_suppressed(findings, base)
                return kept, errors, sections, dropped
            f, e, section = execute_findings(source, device=args.device, **common)
        except DeviceUnavailable as exc:
            raise UsageError(str(exc)) from exc
        findings, errors = _merge(findings, f), errors + e
        sections["execute"] = section
    kept, dropped = _drop_suppressed(findings, base)
    return kept, errors, sections, dropped


def _layout(args):
    """--world-size / --mesh / --rank as the layout the distributed trace runs (None without them)."""
    from auditor.trace.collectives import LayoutError, parse_layout

    try:
        layout = parse_layout(args.world_size, args.mesh, args.rank)
    except LayoutError as exc:
        raise UsageError(str(exc)) from exc
    if layout is None and args.rank:
        raise UsageError("--rank needs --world-size or --mesh")
    return layout


def _merge(static, dynamic):
    """One report: a dynamic finding that names the same line and symbol as a static one is dropped."""
    seen = {(f.path, f.line, f.symbol) for f in static}
    return static + [f for f in dynamic if (f.path, f.line, f.symbol) not in seen]


def _drop_suppressed(findings, base: Path):
    """The inline comment that silences a static finding silences a trace or execute finding too."""
    from auditor.discover import SourceError, read_source
    from auditor.suppress import Suppressions

    lines_of: dict[str, Suppressions] = {}
    kept, dropped = [], 0
    for f in findings:
        if f.source != "static":
            if f.path not in lines_of:
                try:
                    data, _ = read_source(base / f.path, 64 * 1024 * 1024)
                    lines_of[f.path] = Suppressions.of(data.decode("utf-8", errors="replace").splitlines())
                except (OSError, SourceError):
                    lines_of[f.path] = Suppressions.of([])
            if lines_of[f.path].covers(f.line, f.end_line, f.code):
                dropped += 1
                continue
        kept.append(f)
    return kept, dropped
