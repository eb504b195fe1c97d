"""`pip install -e ".[compile]"` (a script, a Dockerfile RUN line, a CI step) asks for an extra of the project's own
pyproject.toml: what that extra pulls in is written in another file of the tree (t15j, issue 15: Zonos'
Dockerfile installs `.[compile]`, whose packages are flash-attn, mamba-ssm and causal-conv1d). The same two steps
as `cmake` calls (auditor/project/cmake_calls.py):

1. the shell reader records each install of a local tree with extras (`dir`, `extras`, the word's place) in the
   file's summary (`local_extras`, kept in the cache entry), when the extra's name alone says nothing (`[cuda12]`,
   `[vllm]` are reported from the name, as before);
2. after every file is read, `apply_local_extras` reads `[project.optional-dependencies]` of that folder's
   pyproject.toml (from the tree's root, then from the calling file's folder) and reports the install once, as
   NPU023 (a CUDA variant selected through an extra), when the extra lists a package a dependency rule marks as a
   CUDA-only library (an error there: not a plain torch pin, which is information).

Nothing is run or installed; a pyproject that is not TOML, or an extra it does not define, gives nothing.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from auditor.findings import FileResult, Finding
from auditor.project.makefile import add_call_findings, call_finding, positioned, recorded_calls, unsuppressed

SUMMARY_KEY = "local_extras"
_RULE_CODE = "NPU023"
_MAX_BYTES = 512 * 1024
_NAME_RE = re.compile(r"[-_.]+")


def local_extra_call(path: str, extras: list[str], cwd: str | None) -> dict[str, Any] | None:
    """The record of `pip install PATH[extras]` for a literal relative PATH (`.`, `./`, `subproject`), relative
    to where the script started (an unknown or absolute folder is read as the tree's root: a Dockerfile's
    `COPY . /app` then `WORKDIR /app`). A plain install of a sub-folder that builds a CUDA extension is
    auditor/project/local_builds.py's."""
    path = path.strip("\"'").rstrip("/") or "."
    names = [e.strip() for e in extras if e.strip() and "$" not in e]
    if not names or "$" in path or path.startswith(("/", "~", "..")):
        return None
    folder = "" if path in (".", "./") else path.removeprefix("./")
    if cwd and not cwd.startswith("/") and folder:
        folder = f"{cwd.rstrip('/')}/{folder}"
    elif cwd and not cwd.startswith("/"):
        folder = cwd.rstrip("/")
    return {"dir": folder, "extras": names}


def _normal(name: str) -> str:
    return _NAME_RE.sub("-", name).lower()


def _optional_dependencies(pyproject: Path, cache: dict) -> dict[str, list[str]]:
    if pyproject not in cache:
        table: dict[str, list[str]] = {}
        try:
            if pyproject.stat().st_size <= _MAX_BYTES:
                doc = tomllib.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
                project = doc.get("project")
                found = project.get("optional-dependencies") if isinstance(project, dict) else None
                if isinstance(found, dict):
                    table = {_normal(str(k)): [str(v) for v in vs if isinstance(v, str)]
                             for k, vs in found.items() if isinstance(vs, list)}
                    name = project.get("name") if isinstance(project, dict) else None
                    if isinstance(name, str) and name.strip():
                        table = {k: _own_extras_expanded(table, k, _normal(name.strip())) for k in table}
        except (OSError, ValueError):
            table = {}
        cache[pyproject] = table
    return cache[pyproject]


_OWN_EXTRA_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]*)\]")


def _own_extras_expanded(table: dict[str, list[str]], extra: str, own: str) -> list[str]:
    """An extra's requirements with the project's references to its own extras (`all = ["lerobot[training]",
    "lerobot[viz]"]` in lerobot's pyproject) replaced by what those extras list, to any depth (t15k)."""
    out: list[str] = []
    seen: set[str] = set()
    todo = [extra]
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        for requirement in table.get(name, []):
            own_ref = _OWN_EXTRA_RE.match(requirement)
            if own_ref and _normal(own_ref.group(1)) == own:
                todo += [_normal(e.strip()) for e in own_ref.group(2).split(",") if e.strip()]
            else:
                out.append(requirement)
    return out



def local_extra_findings(result: FileResult, root: Path, rule, matchers, cache: dict | None = None,
                         product: str = "a2") -> list[Finding]:
    """The findings of `result`'s recorded installs of local extras that pull in CUDA-only packages."""
    from auditor.project.requirements import requirement_hits

    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if rule is None or not calls:
        return []
    cache = {} if cache is None else cache
    here = Path(result.path)
    new = []
    for call_pos, folder, extras in positioned(calls, "dir", "extras"):
        table: dict[str, list[str]] = {}
        where = ""
        for base in bases:
            candidate = (base / folder if folder else base) / "pyproject.toml"
            if candidate.is_file():
                table = _optional_dependencies(candidate, cache)
                where = f"{folder}/pyproject.toml" if folder else "pyproject.toml"
                break
        for extra in extras:
            packages = []
            for requirement in table.get(_normal(str(extra)), []):
                hits = [h for h in requirement_hits(matchers, requirement)
                        if h[2].severity_for(product) == "error" and h[2].code != _RULE_CODE]
                if hits:
                    packages.append(hits[0][1])
            if not packages:
                continue
            symbol = f".[{extra}]"
            listed = ", ".join(packages[:4]) + (", ..." if len(packages) > 4 else "")
            message = rule.message.replace("{symbol}", symbol) + \
                f" (the `{extra}` extra of {where}: {listed})"
            new.append(call_finding(rule, product, result, call_pos, message, symbol,
                                    {"pyproject": where, "extra": str(extra), "packages": packages}))
    if new:
        return unsuppressed(new, calls, here, root)
    return new


def apply_local_extras(results: list[FileResult], root: Path, rules, product: str = "a2") -> None:
    """Add the local-extra findings to every file that recorded such installs (runner, after the per-file pass)."""
    from auditor.project.hits import ProjectMatchers

    if not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    rule = next((r for r in rules if r.code == _RULE_CODE), None)
    if rule is None:
        return
    matchers = ProjectMatchers.build(rules)
    cache: dict = {}
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: local_extra_findings(result, top, rule, matchers, cache, product))
