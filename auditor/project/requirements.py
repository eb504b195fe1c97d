"""Dependency pins: requirements files, pyproject.toml and conda environment files, read with `packaging`
(PEP 508 specifiers and markers), `tomllib` and PyYAML. Each requirement becomes the symbol of a
`requirement` matcher: its normalised distribution name, `torch+cu121` for a CUDA build of torch (local
version tag), `index:URL` for an index or find-links URL."""
from __future__ import annotations

import re
import tomllib
from typing import TYPE_CHECKING, Iterator

import yaml
from packaging.requirements import InvalidRequirement, Requirement

from auditor.project.hits import Collector, decode_text, matchers, normalize_dist
from auditor.findings import FileError, FileResult

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

_OPTION_RE = re.compile(r"^(-i|--index-url|--extra-index-url|-f|--find-links)(?:\s+|=)(\S+)")
_CUDA_TAG_RE = re.compile(r"\+(cu\d+)")
# PyTorch's own wheel indexes name the CUDA build in the path: .../whl/cu121
# (and find-links pages named for one: https://data.pyg.org/whl/torch-2.1.0+cu121.html)
_CUDA_INDEX_RE = re.compile(r"/whl/(?:nightly/)?(cu\d+)\b|/(cu1\d\d)/?$|[+_-](cu1\d\d)\.html$")


def requirement_symbols(text: str) -> Iterator[tuple[str, str]]:
    """(symbol, the text that names it) for one requirement string; nothing for what PEP 508 rejects."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return
    name = normalize_dist(req.name)
    yield name, req.name
    tag = _CUDA_TAG_RE.search(str(req.specifier)) or (_CUDA_INDEX_RE.search(req.url) if req.url else None)
    if tag:
        yield f"{name}+{next(g for g in tag.groups() if g)}", text


def wheel_symbols(path: str) -> list[str]:
    """A wheel file named on a command line: its distribution, and `name+cuXXX` for a CUDA local version."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        name, version, _build, _tags = parse_wheel_filename(path.rsplit("/", 1)[-1])
    except InvalidWheelFilename:
        return []
    symbols = [str(name)]
    tag = _CUDA_TAG_RE.search("+" + (version.local or "").replace(".", ""))
    if tag:
        symbols.append(f"{name}+{tag.group(1)}")
    return symbols


def _report(col: Collector, line: int, line_text: str, requirement: str) -> None:
    for symbol, spelled in requirement_symbols(requirement):
        rule = matchers(col.engine).match_requirement(symbol)
        if rule is not None:
            start = line_text.find(spelled)
            column = start + 1 if start >= 0 else 1
            col.add(rule, symbol, line, column, column + len(spelled))


def _index(col: Collector, line: int, line_text: str, url: str) -> None:
    m = _CUDA_INDEX_RE.search(url)
    if m:
        start = line_text.find(url)
        col.add(matchers(col.engine).match_requirement("index:" + url), "index:" + url, line,
                start + 1, start + 1 + len(url))


def analyze_requirements_txt(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    col = Collector(engine, rel, text)
    logical = ""
    first = 0
    for number, raw in enumerate(text.splitlines(), 1):
        # pip's format: '#' starts a comment at line start or after whitespace; '\' continues a line
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not logical:
            first = number
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical = (logical + line).strip()
        if logical:
            opt = _OPTION_RE.match(logical)
            if opt:
                _index(col, first, col.lines[first - 1], opt.group(2))
            elif not logical.startswith("-"):
                # per-requirement options (`--hash=...`, `--config-settings ...`) follow the specifier
                _report(col, first, col.lines[first - 1], re.split(r"\s+--?[a-z]", logical, maxsplit=1)[0])
            elif logical.startswith(("-e ", "--editable ")):
                pass    # a local or VCS checkout: its own files are audited where they live
        logical = ""
    return col.done()


def _locate(lines: list[str], needle: str, start: int = 0) -> int:
    """1-based number of the first line at or after start that holds the quoted requirement."""
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i + 1
    return 1


def _pyproject_requirements(doc: dict) -> Iterator[str]:
    project = doc.get("project") or {}
    yield from project.get("dependencies") or []
    for group in (project.get("optional-dependencies") or {}).values():
        yield from group or []
    yield from (doc.get("build-system") or {}).get("requires") or []
    for group in (doc.get("dependency-groups") or {}).values():      # PEP 735
        yield from (g for g in group or [] if isinstance(g, str))
    poetry = (doc.get("tool") or {}).get("poetry") or {}
    for section in [poetry.get("dependencies") or {}, poetry.get("dev-dependencies") or {}] + \
            [g.get("dependencies") or {} for g in (poetry.get("group") or {}).values() if isinstance(g, dict)]:
        for name in section:
            if name != "python":
                yield name


def analyze_pyproject(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return FileResult(rel, error=FileError(rel, "syntax", f"invalid TOML: {exc}"))
    col = Collector(engine, rel, text)
    after: dict[str, int] = {}             # the same string twice (two extras pin flash-attn): the next one
    for req in _pyproject_requirements(doc):
        if not isinstance(req, str):
            continue
        quoted = f'"{req}"' if any(f'"{req}"' in ln for ln in col.lines) else req
        number = _locate(col.lines, quoted, after.get(quoted, 0))
        after[quoted] = number
        _report(col, number, col.lines[number - 1] if col.lines else "", req)
    uv = ((doc.get("tool") or {}).get("uv") or {}).get("index") or []
    for entry in uv if isinstance(uv, list) else []:
        url = entry.get("url") if isinstance(entry, dict) else None
        if isinstance(url, str):
            number = _locate(col.lines, url)
            _index(col, number, col.lines[number - 1], url)
    return col.done()


def conda_spec_name(spec: str) -> str:
    """A conda match spec's package name: name[=version[=build]], `name>=1`, or channel::name."""
    return re.split(r"[\s=<>!~\[]", spec.split("::")[-1], maxsplit=1)[0]


def analyze_conda(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    """environment.yml: conda specs (`pytorch-cuda=12.1`, `cudatoolkit`) and the `pip:` sub-list."""
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        return FileResult(rel, error=FileError(rel, "syntax", f"invalid YAML: {exc}".splitlines()[0]))
    if not isinstance(root, yaml.MappingNode) or not any(
            isinstance(k, yaml.ScalarNode) and k.value in ("dependencies", "channels") for k, _ in root.value):
        # named like an environment (`conda-ci.yml`, `conda_build.yaml`) but not one: a config or CI workflow
        from auditor.project.configs import analyze_config

        return analyze_config(engine, data, rel)
    col = Collector(engine, rel, text)
    for key, value in root.value:
        if key.value == "channels" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                # `nvidia`, or one of its labels: `nvidia/label/cuda-11.8.0`
                if isinstance(item, yaml.ScalarNode) and item.value.lower().split("/", 1)[0] == "nvidia":
                    col.add(matchers(engine).match_requirement("channel:nvidia"), "channel:nvidia",
                            item.start_mark.line + 1, item.start_mark.column + 1)
        if key.value != "dependencies" or not isinstance(value, yaml.SequenceNode):
            continue
        for item in value.value:
            if isinstance(item, yaml.ScalarNode):
                name = conda_spec_name(item.value)
                if name:
                    line = item.start_mark.line + 1
                    rule = matchers(engine).match_requirement(normalize_dist(name))
                    col.add(rule, normalize_dist(name), line, item.start_mark.column + 1,
                            item.start_mark.column + 1 + len(name))
            elif isinstance(item, yaml.MappingNode):
                for k, v in item.value:
                    if k.value == "pip" and isinstance(v, yaml.SequenceNode):
                        for p in v.value:
                            if isinstance(p, yaml.ScalarNode):
                                n = p.start_mark.line + 1
                                opt = _OPTION_RE.match(p.value)
                                if opt:
                                    _index(col, n, col.lines[n - 1], opt.group(2))
                                else:
                                    _report(col, n, col.lines[n - 1], p.value)
    return col.done()
