"""Per-file analysis: read and decode, prefilter on trigger words, locate the statements that can match
with the fast `ast` parser, and run the libcst visitor only on those statements.

Cost model (see bench/bench_speed.py): libcst parsing plus position metadata dominates, so we pay it only
for the statements that contain a trigger word; a file without any trigger word is not parsed by libcst.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from auditor.findings import Finding
from auditor.report import FileError
from auditor.rules import Rule, SymbolDetail
from auditor.static.backends import apply_context, build_backend_context
from auditor.static.compiled import WORD_RE, CompiledRules
from auditor.static.context import HOLE, FileContext, build_context
from auditor.static.visitor import MatchVisitor, RawHit

MAX_FILE_BYTES = 8 * 1024 * 1024
SUPPRESS_RE = re.compile(r"#\s*npu-audit:\s*ignore(?:\[([A-Za-z0-9_,\s-]*)\])?")


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    lines: int = 0
    suppressed: int = 0


def decode_source(data: bytes) -> str:
    """Decode honouring a PEP 263 coding cookie and a UTF-8 BOM; raises UnicodeDecodeError / SyntaxError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _fmt(template: str | None, **values: str | None) -> str | None:
    if template is None:
        return None
    for key, value in values.items():
        template = template.replace("{" + key + "}", value if value is not None else "")
    return template


def _nearest_detail(rule: Rule, hit: RawHit) -> tuple[str | None, SymbolDetail | None, str]:
    """The symbol entry for a hit: its own, else (for a qualified name below the matched pattern) the nearest
    ancestor's with the rest of the name, else the matched pattern's (string rules key entries by pattern)."""
    detail = rule.detail(hit.symbol)
    if detail is not None:
        return hit.symbol, detail, ""
    if hit.value and hit.symbol.startswith(hit.value + "."):
        name = hit.symbol
        while len(name) > len(hit.value):
            name = name.rsplit(".", 1)[0]
            detail = rule.detail(name)
            if detail is not None:
                return name, detail, hit.symbol[len(name):]
        return None, None, ""
    if hit.value:
        detail = rule.detail(hit.value)
        if detail is not None:
            return hit.value, detail, ""
    return None, None, ""


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.If,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
# Statements this short are parsed whole; longer compound statements are split into header and body.
_SMALL = 3


class _Slicer:
    """Cuts a module into the smallest pieces worth parsing: each relevant simple statement, and the
    header of a relevant compound statement (`with torch.autocast(...):`, decorators + `def`) with a
    `pass` body; bodies are searched statement by statement. Clause lines that cannot stand alone
    (`elif x:`, `except E:`) make the whole statement one piece."""

    def __init__(self, lines: list[str], relevant: list[int]) -> None:
        self.lines = lines
        self.relevant = relevant

    def _hit(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.relevant, start)
        return i < len(self.relevant) and self.relevant[i] <= end

    def slices(self, body: list[ast.stmt], depth: int = 0, loops: int = 0):
        """(first line, last line, indented, body indent or None, enclosing loops) for each piece."""
        for stmt in body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            end = stmt.end_lineno or stmt.lineno
            if not self._hit(start, end):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                continue      # a docstring: never a finding
            if not isinstance(stmt, _COMPOUND) or end - start < _SMALL:
                yield start, end, depth > 0, None, loops
                continue
            yield from self._compound(stmt, start, end, depth, loops)

    def _compound(self, stmt: ast.stmt, start: int, end: int, depth: int, loops: int):
        blocks = [stmt.body]
        clause_heads: list[tuple[int, int]] = []      # `elif cond:` headers, which cannot stand alone
        node = stmt
        while isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) \
                and self.lines[node.orelse[0].lineno - 1].lstrip().startswith("elif"):
            node = node.orelse[0]
            clause_heads.append((node.lineno, _first_line(node.body[0]) - 1))
            blocks.append(node.body)
        blocks += [getattr(node, "orelse", []), getattr(stmt, "finalbody", [])]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        header_end = _first_line(stmt.body[0]) - 1
        covered = set(range(start, header_end + 1))
        for first, last in clause_heads:
            covered.update(range(first, last + 1))
        for block in blocks:
            for child in block:
                covered.update(range(_first_line(child), (child.end_lineno or child.lineno) + 1))
        # `else:`, `except E:`, `finally:` lines (and continuations of clause headers): not comments or blanks
        clause_lines = [n for n in range(start, end + 1) if n not in covered
                        and self.lines[n - 1].strip() and not self.lines[n - 1].lstrip().startswith("#")]
        if header_end < start or any(self._hit(a, b) for a, b in clause_heads) \
                or any(self._hit(n, n) for n in clause_lines):
            yield start, end, depth > 0, None, loops      # cannot be split: parse it whole
            return
        if self._hit(start, header_end) and not isinstance(stmt, _TRY):   # `try:` holds no code
            indent = self.lines[stmt.body[0].lineno - 1][:stmt.body[0].col_offset]
            yield start, header_end, depth > 0, indent, loops   # the visitor sees the loop node itself
        looping = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            loops = 0                                     # a def in a loop body runs when called
        for i, block in enumerate(blocks):
            yield from self.slices(block, depth + 1, loops + (looping and i == 0))


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def suppressed(lines: list[str], line: int, end_line: int, code: str) -> bool:
    """`# npu-audit: ignore` or `# npu-audit: ignore[CODE,...]` on the first or last line of a finding."""
    for n in {line, end_line}:
        if 1 <= n <= len(lines) and "npu-audit" in lines[n - 1]:
            m = SUPPRESS_RE.search(lines[n - 1])
            if m and (m.group(1) is None or code in {c.strip().upper() for c in m.group(1).split(",")}):
                return True
    return False


class _SliceUnparsable(Exception):
    def __init__(self, start: int, end: int) -> None:
        super().__init__(f"lines {start}-{end}")
        self.start, self.end = start, end


class StaticEngine:
    """Holds the compiled rules; analyze one file at a time (cheap to create once per worker process)."""

    def __init__(self, rules: tuple[Rule, ...], product: str = "a2",
                 coverage_apis: dict[str, dict] | None = None, max_bytes: int = MAX_FILE_BYTES,
                 slicing: bool = True) -> None:
        self.product = product
        self.slicing = slicing   # False parses every file whole: the reference the slicing is tested against
        self.max_bytes = max_bytes
        extra: dict[str, Rule] = {}
        cov_rules = [r for r in rules if "coverage" in r.match]
        if cov_rules and coverage_apis:
            from dataclasses import replace

            from auditor.rules import SymbolDetail

            base = cov_rules[0]
            rule = replace(base, symbols={
                name: SymbolDetail(message=info.get("message"), substitution=info.get("substitution"))
                for name, info in coverage_apis.items()})
            extra = {name: rule for name in coverage_apis}
        self.compiled = CompiledRules.build(rules, extra_exact=extra)

    # -- entry points --------------------------------------------------------------------------

    def analyze_path(self, path: Path, rel: str) -> FileResult:
        try:
            size = path.stat().st_size
            if size > self.max_bytes:
                return FileResult(rel, error=FileError(
                    rel, "too-large", f"{size / 1e6:.1f} MB is over the {self.max_bytes / 1e6:.0f} MB limit; "
                    "not audited (raise it with --max-file-size)"))
            data = path.read_bytes()
        except OSError as exc:
            return FileResult(rel, error=FileError(rel, "unreadable", exc.strerror or str(exc)))
        return self.analyze_bytes(data, rel)

    def analyze_bytes(self, data: bytes, rel: str) -> FileResult:
        try:
            return self._analyze(data, rel)
        except RecursionError:
            return FileResult(rel, error=FileError(rel, "syntax", "nesting too deep to parse"))
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the audit of the others
            return FileResult(rel, error=FileError(rel, "internal", f"{type(exc).__name__}: {exc}"))

    # -- the pass ------------------------------------------------------------------------------

    def _analyze(self, data: bytes, rel: str) -> FileResult:
        name = rel.rsplit("/", 1)[-1]
        file_rule = self.compiled.match_file(name)
        if not name.endswith((".py", ".pyw")):
            result = FileResult(rel, lines=data.count(b"\n"))
            if file_rule is not None:
                result.findings.append(self._finding(RawHit(file_rule, None, name), rel, 1, 1, 1, 1))  # type: ignore[arg-type]
            return result
        if looks_binary(data):
            return FileResult(rel, error=FileError(rel, "binary", "binary content (NUL bytes) in a .py file"))
        try:
            text = decode_source(data)
        except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
            return FileResult(rel, error=FileError(rel, "encoding", f"cannot decode: {exc}"))
        result = FileResult(rel, lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = ast.parse(text, filename=rel)
            except SyntaxError as exc:
                result.error = FileError(rel, "syntax", exc.msg or "invalid syntax", exc.lineno)
                return result
            except ValueError as exc:
                result.error = FileError(rel, "syntax", str(exc))
                return result
        c = self.compiled
        words = set(WORD_RE.findall(text))
        if not (words & c.file_words) and not (c.trigger_prefix_re and c.trigger_prefix_re.search(text)):
            return result
        ctx = build_context(tree)
        triggers = self._file_triggers(ctx)
        lines = text.splitlines(keepends=True)
        relevant = self._relevant_lines(lines, text, triggers)
        hits: list[tuple[RawHit, int, int, int, int]] = []
        unparsable: list[str] = []
        pieces = _Slicer(lines, relevant).slices(tree.body) if self.slicing else [(1, len(lines), False, None, 0)]
        for start, end, indented, body_indent, loops in pieces:
            try:
                hits.extend(self._match_slice(lines, start, end, indented, ctx, body_indent, loops))
            except _SliceUnparsable as exc:
                unparsable.append(f"{exc.start}-{exc.end}")
        if unparsable:   # Python accepted it, libcst did not (newer syntax): say what was not looked at
            result.error = FileError(rel, "syntax", "libcst cannot parse lines " + ", ".join(unparsable)
                                     + "; findings there are missing", int(unparsable[0].split("-")[0]))
        seen = set()
        for hit, line, col, end_line, end_col in hits:
            if hit.via is not None:
                value = self._visible_value(ctx, hit, line)
                if value is None:
                    continue
                hit.symbol = value
            key = (hit.rule.code, line, col, hit.symbol)
            if key in seen:
                continue
            seen.add(key)
            if suppressed(lines, line, end_line, hit.rule.code):
                result.suppressed += 1
                continue
            result.findings.append(self._finding(hit, rel, line, col, end_line, end_col))
        if result.findings:
            # Multi-backend context (NPU branches, backend tables, platform classes, guarded imports): one more
            # walk of the tree, only for files with findings.
            wanted = sorted({f.line for f in result.findings})
            result.findings = apply_context(result.findings, build_backend_context(tree, lines, wanted))
        result.findings.sort(key=Finding.sort_key)
        return result

    def _file_triggers(self, ctx: FileContext) -> set[str]:
        """Trigger words plus, through this file's aliases, the words of qualified-name rules: the local
        name when it stands for something a rule matches (`tc` for torch.cuda), else the words a chain
        below its target must spell out (see CompiledRules._index_qualnames)."""
        c = self.compiled
        triggers = set(c.trigger_words)
        targets = dict(ctx.bindings)                   # every import of a name...
        for local, qual in ctx.aliases.items():       # ...and module-level `amp = torch.cuda.amp`
            targets.setdefault(local, [qual])
        for local, quals in targets.items():
            for qual in quals:
                if c.knows(qual) or c.match_import(qual) is not None:
                    triggers.add(local)
                triggers |= c.below.get(qual, frozenset())
        for attr, qual in ctx.self_attrs.items():    # `self.rms_norm_fn(...)` after `self.rms_norm_fn = rms_norm_fn`
            if c.knows(qual):
                triggers.add(attr)
        for local, decorators in ctx.decorated.items():
            if c.match_launch(decorators) is not None:
                triggers.add(local)   # `kernel[grid](...)` lines name no rule word
        for local, values in ctx.constants.items():
            if any(c.match_string(v) or c.match_env(v) for v in values):
                triggers.add(local)
        for module in ctx.star_imports:             # the import statement itself is the finding
            if c.knows(module) or c.match_import(module) is not None:
                triggers.add(module.rsplit(".", 1)[-1])
        return triggers

    def _relevant_lines(self, lines: list[str], text: str, triggers: set[str]) -> list[int]:
        """Sorted numbers of the lines that hold a trigger word (one findall per line: cheap)."""
        rx = self.compiled.trigger_prefix_re
        if rx is not None and not rx.search(text):
            rx = None
        out = []
        for number, line in enumerate(lines, 1):
            if not triggers.isdisjoint(WORD_RE.findall(line)) or (rx is not None and rx.search(line)):
                if not line.lstrip().startswith("#"):       # a comment line is never a finding
                    out.append(number)
        return out

    def _match_slice(self, lines: list[str], start: int, end: int, indented: bool, ctx: FileContext,
                     body_indent: str | None = None, loops: int = 0):
        chunk = "".join(lines[start - 1:end])
        if not chunk.endswith("\n"):
            chunk += "\n"
        if body_indent is not None:
            chunk += body_indent + "pass\n"   # the header of a compound statement, without its body
        offset = start - 1
        if indented:
            chunk = "if 1:\n" + chunk     # keeps the original columns of an indented block
            offset -= 1
        try:
            module = cst.parse_module(chunk)
        except cst.ParserSyntaxError:
            raise _SliceUnparsable(start, end) from None
        visitor = MatchVisitor(self.compiled, ctx, loops)
        module.visit(visitor)
        if not visitor.hits:
            return []
        # Positions cost a code generation pass over the slice: only for slices with a hit.
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        out = []
        for hit in visitor.hits:
            pos = positions[hit.node]
            end_pos = positions[hit.end_node].end if hit.end_node is not None else pos.end
            out.append((hit, pos.start.line + offset, pos.start.column + 1, end_pos.line + offset, end_pos.column + 1))
        return out

    def _visible_value(self, ctx: FileContext, hit: RawHit, line: int) -> str | None:
        """A constant followed to a use counts only where its binding is in scope (function locals stay
        local); returns the value in scope that the hit's rule matches."""
        c = self.compiled
        for value in sorted(ctx.visible_values(hit.via, line)):
            m = c.match_string(value)
            if (m is not None and m[0] is hit.rule) or c.match_env(value) is hit.rule:
                return value.replace(HOLE, "{…}")
        return None

    def _finding(self, hit: RawHit, rel: str, line: int, col: int, end_line: int, end_col: int) -> Finding:
        rule = hit.rule
        key, detail, rest = _nearest_detail(rule, hit)
        via = f" (via {hit.via})" if hit.via else ""
        if detail and detail.replace:
            # the entry for torch.cuda.Stream also serves torch.cuda.Stream.priority_range
            replace_with = detail.replace + rest
        else:
            replace_with = rule.replace
            if replace_with and hit.value and "." in hit.symbol and hit.symbol.startswith(hit.value + "."):
                # a module-wide rule: torch.cuda -> torch.npu turns torch.cuda.synchronize into torch.npu.synchronize
                replace_with = replace_with + hit.symbol[len(hit.value):]
        fields = dict(symbol=hit.symbol, value=hit.value, replace=replace_with)
        message = _fmt(detail.message if detail and detail.message else rule.message, **fields) + via
        substitution = _fmt(detail.substitution if detail and detail.substitution else rule.substitution, **fields)
        fix = detail.fix if detail and detail.fix else rule.fix
        if hit.via and fix == "safe":
            fix = "none"   # the value is defined elsewhere: the fix belongs at the definition
        if not replace_with and fix != "none":
            fix = "none"   # nothing to write (CUDA_DEVICE_MAX_CONNECTIONS has no twin): not fixable
        return Finding(
            code=rule.code, name=rule.name, category=rule.category,
            severity=rule.severity_for(self.product, key),
            effort=detail.effort if detail and detail.effort else rule.effort,
            path=rel, line=line, col=col, end_line=end_line, end_col=end_col,
            message=message, substitution=substitution, fix=fix, source="static", symbol=hit.symbol,
            data={"replace": replace_with} if replace_with and fix != "none" else {},   # what `audit fix` writes
        )
