"""`audit fix PATH... [--diff] [--write] [--unsafe-fixes] [--select/--ignore CODES]`.

Exit codes, as ruff's `--diff`/`--fix`: 0 nothing to change (with --diff) or every change written (with
--write); 1 with --diff when there are changes to apply, or when a file could not be fixed (it is left as it
was and named on stderr); 2 usage errors. The diff goes to stdout, the counts to stderr.
"""
from __future__ import annotations

import argparse
import difflib
import os
import stat
import sys
import tempfile
from collections import Counter
from pathlib import Path

from auditor.fix import FileFix, applicable, finding_key, fix_bytes
from auditor.fix.text_edits import fix_project_bytes
from auditor.project import project_kind

# project files whose findings carry text edits (notebooks are reported, not rewritten)
TEXT_EDIT_KINDS = ("shell", "dockerfile", "config")

EXIT_OK, EXIT_CHANGES, EXIT_USAGE = 0, 1, 2


def unified_diff(fix: FileFix) -> str:
    return "".join(difflib.unified_diff(
        fix.original.splitlines(keepends=True), fix.fixed_text.splitlines(keepends=True),
        fromfile=f"a/{fix.path}", tofile=f"b/{fix.path}"))


class WriteRefused(Exception):
    """A file `fix --write` will not change; the message says why."""


def audited_roots(paths: list[Path]) -> list[Path]:
    """The folders a run may write under: each given folder, or the folder of each given file."""
    return [(p if p.is_dir() else p.parent).resolve() for p in paths]


def check_writable(path: Path, roots: list[Path]) -> Path:
    """The real file to write, or WriteRefused: a symlink whose target lies outside the audited tree, a
    read-only file, anything but a regular file."""
    real = path.resolve()
    if not any(real == root or root in real.parents for root in roots):
        raise WriteRefused(f"a symbolic link to {real}, outside the audited tree; not changed")
    st = real.stat()
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused("not a regular file; not changed")
    if not st.st_mode & 0o222:
        raise WriteRefused("read-only (no write permission bit); not changed - make it writable to fix it")
    return real


def _write_atomic(path: Path, data: bytes) -> None:
    """Write next to the file and rename over it, keeping permission bits and owner: an interrupted run
    never leaves half a file. A file with hard links is written in place instead (a rename would split
    it from its other names), after the new content is complete in memory."""
    path = path.resolve()            # a symlinked file is rewritten where it lives, the link stays a link
    st = path.stat()
    if st.st_nlink > 1:
        with open(path, "r+b") as out:
            out.write(data)
            out.truncate()
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npu-audit-fix", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        if hasattr(os, "chown") and (st.st_uid != os.getuid() or st.st_gid != os.getgid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def statistics(fixes: list[FileFix], unsafe: bool) -> list[str]:
    """ruff --statistics style: per rule, how many findings were fixed and how many are left, and why."""
    fixed = Counter(f.code for fx in fixes for f in fx.fixed)
    names = {f.code: f.name for fx in fixes for f in fx.fixed + fx.remaining}
    left_fixable: Counter[str] = Counter()
    needs_unsafe: Counter[str] = Counter()
    manual: Counter[str] = Counter()
    for fx in fixes:
        for f in fx.remaining:
            if applicable(f, unsafe):
                left_fixable[f.code] += 1
            elif f.fix == "unsafe":
                needs_unsafe[f.code] += 1
            else:
                manual[f.code] += 1
    codes = sorted(set(fixed) | set(left_fixable) | set(needs_unsafe) | set(manual))
    if not codes:
        return []
    rows = [("fixed", "unsafe", "not fixed", "manual", "code", "rule")]
    for code in codes:
        rows.append((str(fixed[code] or ""), str(needs_unsafe[code] or ""), str(left_fixable[code] or ""),
                     str(manual[code] or ""), code, names.get(code, "")))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.rjust(w) for c, w in zip(r[:4], widths)) + f"  {r[4]}  {r[5]}" for r in rows]


def run_fix(args: argparse.Namespace, target) -> int:
    from auditor.errors import UsageError
    from auditor.config import ConfigError, find_pyproject, load_config
    from auditor.discover import discover
    from auditor.rules import load_rules, rules_by_code
    from auditor.static.engine import StaticEngine

    from auditor.config import check_selectors, split_codes
    from auditor.discover import SourceError, read_source

    max_bytes = int(getattr(args, "max_file_size", 8.0) * 1024 * 1024)
    if max_bytes <= 0:
        raise UsageError("--max-file-size must be positive")
    try:
        config = load_config(find_pyproject(args.paths[0]))
        for flag, value in (("--select", args.select), ("--ignore", args.ignore)):
            check_selectors(split_codes(value), load_rules(), flag)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if config.unread:
        print(f"audit: warning: {config.unread}", file=sys.stderr)
    if args.select:
        config.select = split_codes(args.select)
    config.ignore += split_codes(args.ignore)
    rules = rules_by_code()
    from auditor.coverage import unsupported_api_details

    # the same pass as `audit check`, coverage rule included, so "what remains" counts NPU501 too
    engine = StaticEngine(load_rules(), product=target.product, coverage_apis=unsupported_api_details(target),
                          max_bytes=max_bytes)
    found = discover(list(args.paths), exclude=tuple(config.exclude), respect_gitignore=config.respect_gitignore)
    roots = audited_roots(list(args.paths))
    base = found.root if found.root.is_dir() else found.root.parent
    write = bool(args.write)
    show_diff = bool(args.diff) or not write

    def selected(f) -> bool:
        return config.code_enabled(f, rules) and not config.ignored_in_file(f, base)

    fixes: list[FileFix] = []
    failed = 0
    for err in found.errors:
        print(f"audit fix: {err.one_line()}", file=sys.stderr)
        failed += 1
    for path, rel in found.files:
        kind = project_kind(path.name)
        if not rel.endswith((".py", ".pyw")) and kind not in TEXT_EDIT_KINDS:
            continue
        try:
            data, _ = read_source(path, max_bytes)       # regular files only, the same size limit as check
        except SourceError as exc:
            print(f"audit fix: {rel}: {exc.kind}: {exc.message}", file=sys.stderr)
            failed += 1
            continue
        except OSError as exc:
            print(f"audit fix: {rel}: unreadable: {exc.strerror or exc}", file=sys.stderr)
            failed += 1
            continue
        if kind in TEXT_EDIT_KINDS:
            fx = fix_project_bytes(data, rel, engine, unsafe=bool(args.unsafe_fixes), selected=selected)
        else:
            fx = fix_bytes(data, rel, engine, rules, unsafe=bool(args.unsafe_fixes), selected=selected)
        fixes.append(fx)
        if fx.error is not None:
            print(f"audit fix: {rel}: not fixed: {fx.error}", file=sys.stderr)
            failed += 1
            continue
        if not fx.changed:
            continue
        if show_diff:
            sys.stdout.write(unified_diff(fx))
        if write:
            try:
                _write_atomic(check_writable(path, roots), fx.encoded())
            except WriteRefused as exc:
                print(f"audit fix: {rel}: {exc}", file=sys.stderr)
                fx.error = "refused"
                failed += 1
            except OSError as exc:
                print(f"audit fix: {rel}: cannot write: {exc.strerror or exc}", file=sys.stderr)
                fx.error = "cannot write"
                failed += 1

    changed = [fx for fx in fixes if fx.changed]
    n_fixed = sum(len(fx.fixed) for fx in changed)
    remaining = [f for fx in fixes if fx.error is None for f in fx.remaining]
    need_unsafe = sum(1 for f in remaining if f.fix == "unsafe" and not args.unsafe_fixes)
    not_fixed = sum(1 for f in remaining if applicable(f, bool(args.unsafe_fixes)))
    manual = len(remaining) - need_unsafe - not_fixed
    verb = "fixed" if write else "would fix"
    lines = statistics([fx for fx in fixes if fx.error is None], bool(args.unsafe_fixes))
    if lines:
        print("\n".join(lines), file=sys.stderr)
    summary = f"{verb} {n_fixed} finding{'s' if n_fixed != 1 else ''} in {len(changed)} file{'s' if len(changed) != 1 else ''}"
    summary += f"; {len(remaining)} remain: {manual} manual"
    if need_unsafe:
        summary += f", {need_unsafe} fixable with --unsafe-fixes"
    if not_fixed:
        summary += f", {not_fixed} fixable in principle but left alone (reasons below)"
    print(summary, file=sys.stderr)
    for fx in fixes:
        for f in fx.remaining:
            why = fx.skipped.get(finding_key(f))
            if why and applicable(f, bool(args.unsafe_fixes)):
                print(f"  {fx.path}:{f.line}:{f.col} {f.code} left alone: {why}", file=sys.stderr)
    if failed:
        return EXIT_CHANGES
    if not write and changed:
        return EXIT_CHANGES
    return EXIT_OK
