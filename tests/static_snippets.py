"""The static pass on a source snippet, for tests that read findings line by line (precision classes, mined
classes, held-out rows) or over a small tree: one helper instead of a copy in each test file."""
from __future__ import annotations

import functools
import textwrap
from pathlib import Path


def snippet_findings(engine, src: str, rel: str = "example.py") -> list:
    """The findings of `engine` on the dedented snippet as if it were the file `rel`; the snippet must parse."""
    result = engine.analyze_bytes(textwrap.dedent(src).encode(), rel)
    assert result.error is None
    return result.findings


def findings_by_line(engine, src: str, rel: str = "pkg/mod.py") -> dict[int, list]:
    """The findings of `engine` on the dedented snippet as if it were the file `rel`, keyed by line."""
    out: dict[int, list] = {}
    for f in engine.analyze_bytes(textwrap.dedent(src).encode(), rel).findings:
        out.setdefault(f.line, []).append(f)
    return out


def code_severities_by_line(engine, src: bytes, rel: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    """(code, severity) of each finding of `engine` on the source bytes as if they were the file `rel`, by line (the
    snippet is used as written: the recall tests paste real files)."""
    out: dict[int, set[tuple[str, str]]] = {}
    for f in engine.analyze_bytes(src, rel).findings:
        out.setdefault(f.line, set()).add((f.code, f.severity))
    return out


def finding_keys_by_line(engine, src: str, rel: str = "pkg/mod.py") -> dict[int, set[tuple[str, str, str]]]:
    """(code, category, severity) of each finding on the dedented snippet, keyed by line; the snippet must parse."""
    out: dict[int, set[tuple[str, str, str]]] = {}
    for f in snippet_findings(engine, src, rel):
        out.setdefault(f.line, set()).add((f.code, f.category, f.severity))
    return out


def codes_by_line(engine, src: str | bytes, rel: str = "train.py") -> dict[int, set[str]]:
    """The rule codes on each line of the snippet as if it were the file `rel`: a text snippet is dedented and must
    parse; bytes are used as written (the recall tests paste real files)."""
    out: dict[int, set[str]] = {}
    found = engine.analyze_bytes(src, rel).findings if isinstance(src, bytes) else snippet_findings(engine, src, rel)
    for f in found:
        out.setdefault(f.line, set()).add(f.code)
    return out


def code_severity_by_line(engine, src: bytes, rel: str = "main.py") -> dict[int, dict[str, str]]:
    """code -> severity of each finding of `engine` on the source bytes as if they were the file `rel`, by line (the
    snippet is used as written)."""
    out: dict[int, dict[str, str]] = {}
    for f in engine.analyze_bytes(src, rel).findings:
        out.setdefault(f.line, {})[f.code] = f.severity
    return out


def code_severity_in_tree(root: Path, files: dict[str, str]) -> dict[tuple[str, int], dict[str, str]]:
    """Write `files` (relative path -> text, used as written) under `root` and run the static pass over the whole
    tree: code -> severity of each finding, by (path, line)."""
    from auditor.runner import run_static

    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out: dict[tuple[str, int], dict[str, str]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            out.setdefault((r.path, f.line), {})[f.code] = f.severity
    return out


def dedented_tree(root: Path, files: dict[str, str]) -> dict[tuple[str, int], dict[str, str]]:
    """`code_severity_in_tree` on `files` written dedented (snippets indented in a test module)."""
    return code_severity_in_tree(root, {rel: textwrap.dedent(src) for rel, src in files.items()})


def first_line_of(src: str, needle: str) -> int:
    """The 1-based line of the dedented snippet where `needle` first occurs."""
    return next(i for i, text in enumerate(textwrap.dedent(src).splitlines(), 1) if needle in text)


def severity_at(found: dict, rel: str, src: str, needle: str) -> dict[str, str]:
    """`dedented_tree`'s code -> severity on the line of file `rel` (written from `src`) where `needle` first occurs."""
    return found.get((rel, first_line_of(src, needle)), {})


def codes_at(found: dict[int, set[tuple[str, ...]]], line: int) -> set[str]:
    """The codes of `finding_keys_by_line`'s or `code_severities_by_line`'s entry for `line` (the code leads both)."""
    return {key[0] for key in found.get(line, set())}


def categories_at(found: dict[int, set[tuple[str, str, str]]], line: int) -> set[str]:
    """The categories of `finding_keys_by_line`'s entry for `line`."""
    return {cat for _, cat, _ in found.get(line, set())}


def line_of(src: str | bytes, needle: str) -> int:
    """The 1-based line of the snippet (text, or the bytes of a pasted file) holding `needle`, which it must hold
    exactly once."""
    text_lines = (src.decode() if isinstance(src, bytes) else src).splitlines()
    hits = [i for i, text in enumerate(text_lines, 1) if needle in text]
    assert len(hits) == 1, needle
    return hits[0]


def write_source(root: Path, rel: str, src: str) -> None:
    """Write the dedented snippet to `root/rel`, making its folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(src))


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write each dedented snippet of `files` (relative path -> text) under `root`; returns `root`."""
    for rel, src in files.items():
        write_source(root, rel, src)
    return root


def severities_at(root: Path, rel: str, src: str, needle: str) -> set[tuple[str, str]]:
    """(severity, context) of the findings the static pass over the whole tree `root` reports on the line of `rel`
    (whose text is `src`) holding `needle`; there must be some."""
    from auditor.runner import run_static

    line = line_of(src, needle)
    run = run_static([root], jobs=1)
    found = {(f.severity, (f.data or {}).get("context") or "")
             for r in run.results if r.path == rel for f in r.findings if f.line == line}
    assert found, (rel, line)
    return found


def findings_in_tree(root: Path) -> dict[tuple[str, int, str], str]:
    """The static pass over a whole tree (file neighbours count), as (path, line, code) -> severity."""
    from auditor.runner import run_static

    run = run_static([root])
    return {(r.path, f.line, f.code): f.severity for r in run.results for f in r.findings}


def line_codes(engine, rel: str, text: str) -> list[tuple[int, str]]:
    """(line, code) of every finding on the dedented `text` read as the file `rel`; the file must parse."""
    result = engine.analyze_bytes(textwrap.dedent(text).encode(), rel)
    assert result.error is None, result.error
    return sorted((f.line, f.code) for f in result.findings)


def code_line_symbol_category(engine, rel: str, text: str) -> list[tuple[str, int, str, str]]:
    """(code, line, symbol, category) of every finding on the dedented `text` read as the file `rel`, in the engine's
    order; the file must parse."""
    result = engine.analyze_bytes(textwrap.dedent(text).encode(), rel)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol, f.category) for f in result.findings]


def codes_on(found: list[tuple[str, int, str, str]], line: int) -> set[tuple[str, str]]:
    """(code, category) of the `code_line_symbol_category` findings on one line."""
    return {(code, cat) for code, ln, _, cat in found if ln == line}


@functools.lru_cache(maxsize=1)
def _rules_engine():
    """The default rules and a static engine on them, built once for the tree helpers."""
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    rules = load_rules()
    return rules, StaticEngine(rules)


def tree_findings(root: Path, rel: str) -> list[tuple[int, str, str]]:
    """Sorted (line, code, severity) of one file of the tree at `root`, with the tree passes (as the project-file bench
    runs them)."""
    from auditor.project.tree_calls import apply_tree_calls

    rules, engine = _rules_engine()
    result = engine.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, rules, lambda: engine.analyze_bytes)
    return sorted((f.line, f.code, f.severity) for f in result.findings)


def audit_file(root: Path, rel: str, src: str) -> list[tuple[int, str, str]]:
    """`tree_findings` of `src` written (dedented) as the only file `rel` under `root`."""
    return tree_findings(write_tree(root, {rel: src}), rel)


def codes_of_line(found: list[tuple[int, str, str]], line: int) -> set[str]:
    """The codes of the `tree_findings` on one line."""
    return {code for ln, code, _sev in found if ln == line}


def expect_line_codes(found: list[tuple[int, str, str]], flagged: dict[int, set[str]], quiet: tuple[int, ...]) -> None:
    """Each line of `flagged` carries exactly its codes; each `quiet` line none."""
    for line, codes in flagged.items():
        assert codes_of_line(found, line) == codes, line
    for line in quiet:
        assert not codes_of_line(found, line), line


def tree_codes_by_line(root: Path, rel: str) -> dict[int, set[str]]:
    """{line: codes} of one file of the tree at `root`, with the tree passes (as the project-file bench runs them)."""
    out: dict[int, set[str]] = {}
    for line, code, _sev in tree_findings(root, rel):
        out.setdefault(line, set()).add(code)
    return out


def findings_on_line(root: Path, rel: str, lines: int | set[int]) -> set[tuple[str, str, str]]:
    """(code, severity, context) of the findings of the whole-tree static pass on `rel` at `lines` (one line or a
    set), the shape the precision tests of node packs assert on."""
    from auditor.runner import run_static

    wanted = {lines} if isinstance(lines, int) else lines
    return {(f.code, f.severity, (f.data or {}).get("context") or "") for r in run_static([root], jobs=1).results
            if r.path == rel for f in r.findings if f.line in wanted}


def severity_context_on_line(root: Path, rel: str, lines: int | set[int]) -> set[tuple[str, str]]:
    """(severity, context) of `findings_on_line`."""
    return {(sev, ctx) for _, sev, ctx in findings_on_line(root, rel, lines)}


def device_findings_at(run, rel: str, src: str, needle: str) -> list[tuple[str, str | None]]:
    """Sorted (severity, context) of the device findings of `run` on the line of `src` (the file `rel`) holding
    `needle`."""
    line = line_of(src, needle)
    result = next(r for r in run.results if r.path == rel)
    return sorted((f.severity, f.data.get("context")) for f in result.findings
                  if f.line == line and f.category == "device")


def run_values_by_line(root: Path, files: dict[str, str], rel: str, field: str) -> dict[int, set[str]]:
    """A whole-run audit (run_static, tree passes included) of the written files: one Finding field per line of `rel`."""
    from auditor.runner import run_static

    run = run_static([write_tree(root, files)], jobs=1)
    out: dict[int, set[str]] = {}
    for r in run.results:
        if r.path == rel:
            for f in r.findings:
                out.setdefault(f.line, set()).add(getattr(f, field))
    return out


def lines_with_code(root: Path, code: str) -> dict[str, set[int]]:
    """The lines of each file of the tree `root` (audited statically as one project) that get a finding `code`."""
    from auditor.runner import run_static

    out: dict[str, set[int]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            if f.code == code:
                out.setdefault(r.path, set()).add(f.line)
    return out
