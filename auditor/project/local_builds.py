"""`pip install -e .` (or `pip install PATH`, `python setup.py develop`, a conda environment's `pip:` entry
`- ./libs/pointops`) of a folder of the project's own tree whose setup.py compiles CUDA extensions by default
(t15u, issue 15: FoundationPose's `cd bundlesdf/mycuda && pip install -e .`, Pointcept's environment.yml installs
`./libs/pointops`). The same two steps as the local-extra installs (auditor/project/local_extras.py):

1. the shell and conda readers record each build of a local folder the CUDA-project patterns do not name (`dir`,
   the word's place) in the file's summary (`local_builds`, kept in the cache entry);
2. after every file is read, `apply_local_builds` reads that folder's setup.py (from the tree's root, then from the
   calling file's folder) with `ast` and reports the install once, as NPU370 (cuda-extension-build: the rule
   with a `setuppy:` matcher), when the setup.py makes a `CUDAExtension` (or a CppExtension of .cu sources) in no
   `if` / `try`: every build of it runs nvcc; or whose build raises without CUDA (t20b: UniDepth's ops/knn, `if
   torch.cuda.is_available(): extension = CUDAExtension ... else: raise NotImplementedError`). A `python setup.py
   install` with no `cd` is a build of the calling script's own folder (not the tree root's, audited on its own).

Nothing is run or installed; a folder without setup.py, a setup.py `ast` rejects, or one whose CUDA extension is
opt-in (built under a condition) gives nothing.
"""
from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path
from typing import Any

from auditor.findings import FileResult, Finding
from auditor.project.makefile import add_call_findings, call_finding, keep_call, positioned, recorded_calls, unsuppressed


def absolute_folder(cwd: str | None, target: str | None) -> str | None:
    """The absolute folder `target` names from the absolute folder `cwd` (None when either is not known): a script's
    `cd`, a Dockerfile's WORKDIR or the folder a `COPY . DEST` fills."""
    if not target or "$" in target or target.startswith("~") or (cwd is None and not target.startswith("/")):
        return None
    return posixpath.normpath(posixpath.join(cwd or "/", target.strip("\"'")))

SUMMARY_KEY = "local_builds"
_MAX_BYTES = 512 * 1024


def local_build_call(path: str, cwd: str | None, tail: str | None = None) -> dict[str, Any] | None:
    """The record of a build of the folder `path` (`.`, `./libs/pointops`, `bundlesdf/mycuda`) run in `cwd` (the
    folder `cd` moved to, relative to where the script started). When `cd` went to `$VAR/rest` (cwd unknown), `tail`
    is `rest`: the folder is looked up from the tree's root and the calling file's folder, as a relative one."""
    path = path.strip("\"'").rstrip("/") or "."
    if "$" in path or path.startswith(("/", "~", "..")):
        return None
    folder = "" if path in (".", "./") else path.removeprefix("./")
    base = cwd if cwd is not None else tail
    if base is None or base.startswith("/"):
        return None            # somewhere outside the tree (a Dockerfile's WORKDIR of a clone, an unknown `cd`)
    base = base.strip("/")
    folder = "/".join(p for p in (base, folder) if p)
    # `.`: the calling script's own folder (UniDepth's ops/knn/compile.sh: `python setup.py build install` beside
    # its setup.py); the tree root's setup.py is audited as a file of its own (local_build_findings skips it)
    return {"dir": folder or "."}


def record_local_build(result: FileResult, path: str, cwd: str | None, line: int, col: int, end_col: int,
                       tail: str | None = None, context: bool = False) -> None:
    """Keep a build of the local folder `path` in `result`'s summary for the tree pass (a reader's step 1).
    context: the folder is a Dockerfile's build context copied into the image (`COPY . odtk/` then `pip install -e
    odtk/`), so `.` is the tree's own setup.py too, built on this line (tp46a)."""
    call = local_build_call(path, cwd, tail)
    if call is None:
        return
    call.update(line=line, col=col, end_col=end_col)
    if context:
        call["context"] = True
    keep_call(result, SUMMARY_KEY, call)


def cuda_extension_lines(setup_py: Path, cache: dict) -> list[int]:
    """The lines of the CUDA extensions every build of `setup_py` makes; else minus the lines of the `raise`s of a
    build that has no CPU fallback; [] for neither (or a file `ast` rejects). `cache`: path -> lines."""
    from auditor.project.setup_py import raises_without_cuda, unconditional_cuda_extensions

    if setup_py not in cache:
        lines: list[int] = []
        try:
            if setup_py.is_file() and setup_py.stat().st_size <= _MAX_BYTES:
                tree = ast.parse(setup_py.read_bytes())
                # a CUDAExtension every build makes; else the `raise` of a build that has no CPU fallback (`if
                # torch.cuda.is_available(): extension = CUDAExtension ... else: raise NotImplementedError`)
                lines = [c.lineno for c in unconditional_cuda_extensions(tree)] or \
                    [-r.lineno for r, _ in raises_without_cuda(tree)]
        except (OSError, SyntaxError, ValueError, RecursionError):
            lines = []
        cache[setup_py] = lines
    return cache[setup_py]


def _submodule_urls(root: Path) -> dict[str, str]:
    """{path: url} of the tree's `.gitmodules` (git-config syntax: `[submodule "x"]`, `path = ...`, `url = ...`)."""
    try:
        text = (root / ".gitmodules").read_text(errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for block in re.split(r"(?m)^\s*\[submodule\b", text)[1:]:
        path = re.search(r"(?m)^\s*path\s*=\s*(\S+)", block)
        url = re.search(r"(?m)^\s*url\s*=\s*(\S+)", block)
        if path and url:
            out[path.group(1).strip("/")] = url.group(1)
    return out


def _unchecked_out_cuda_package(root: Path, bases: tuple[Path, ...], folder: str, matchers) -> str | None:
    """A folder installed by path that is missing (or empty) in this checkout: a git submodule not cloned (2DGS's
    environment.yml `- submodules/diff-surfel-rasterization`). Its `.gitmodules` URL (else the folder's own name) is
    the package; when the requirement patterns know it as a CUDA one (`diff-*-rasterization`, `simple-knn`), that
    package's build is the install's (t20b, tuned on project test26)."""
    if any((base / folder).is_dir() and any((base / folder).iterdir()) for base in bases):
        return None             # present: its setup.py decides (above), not its name
    url = _submodule_urls(root).get(folder)
    if url is not None:
        host_path = re.sub(r"^(?:\w+://|git@)", "", url).replace(":", "/", 1).removesuffix(".git").lower()
        if matchers.match_requirement("url:" + host_path):
            return url
        name = host_path.rsplit("/", 1)[-1]
    else:
        name = folder.rsplit("/", 1)[-1]
    rule = matchers.match_requirement(name)
    return (url or name) if rule is not None else None


def local_build_findings(result: FileResult, root: Path, rule, cache: dict | None = None,
                         product: str = "a2", matchers=None) -> list[Finding]:
    """The findings of `result`'s recorded builds of local folders whose setup.py always compiles CUDA extensions."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if rule is None or not calls:
        return []
    cache = {} if cache is None else cache
    new = []
    # a build of the copied build context is the install the image makes of the tree's own setup.py
    context = {(c.get("line"), c.get("col")) for c in calls if isinstance(c, dict) and c.get("context")}
    for call_pos, folder in positioned(calls, "dir"):
        for base in bases:
            if folder == "." and base == root and call_pos[:2] not in context:
                continue
            lines = cuda_extension_lines(base / folder / "setup.py", cache)
            if lines:
                if folder == ".":       # the calling script's folder, named from the tree's root
                    try:
                        folder = base.relative_to(root).as_posix()
                    except ValueError:
                        pass
                where = f"{folder}/setup.py"
                how = f"CUDAExtension{'s' if len(lines) > 1 else ''} built unconditionally" if lines[0] > 0 else \
                    "the build raises without CUDA"
                lines = [abs(n) for n in lines]
                message = rule.message.replace("{symbol}", folder) + f" ({where}, line {lines[0]}: {how})"
                new.append(call_finding(rule, product, result, call_pos, message, folder,
                                        {"setup_py": where, "extension_lines": lines}))
                break
        else:
            known = _unchecked_out_cuda_package(root, bases, folder, matchers) if matchers is not None else None
            if known is not None:
                message = rule.message.replace("{symbol}", folder) + \
                    f" (not in this checkout: {known}, a CUDA extension package)"
                new.append(call_finding(rule, product, result, call_pos, message, folder, {"package": known}))
    if new:
        return unsuppressed(new, calls, Path(result.path), root)
    return new


def apply_local_builds(results: list[FileResult], root: Path, rules, product: str = "a2",
                       setup_cache: dict | None = None) -> None:
    """Add the local-build findings to every file that recorded such builds (runner, after the per-file pass);
    setup_cache: `cuda_extension_lines`' cache, shared with the other passes of the run that read setup scripts."""
    if not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    rule = next((r for r in rules if "setuppy" in r.match), None)
    if rule is None:
        return
    from auditor.project.hits import ProjectMatchers

    cache: dict = {} if setup_cache is None else setup_cache
    matchers = ProjectMatchers.build(tuple(rules))
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: local_build_findings(result, top, rule, cache, product, matchers))
