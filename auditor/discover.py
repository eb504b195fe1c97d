"""Find the files to audit under the paths a user gives, without ever following a symlink loop, and
read them safely: only regular files, never more than the size limit."""
from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from auditor.project import project_kind
from auditor.findings import FileError
# the safe reader lives in auditor/source.py (auditor/project imports it from there: no cycle); re-exported here
from auditor.source import (MAX_FILE_BYTES, SourceError, decode_source, read_source,  # noqa: F401
                            too_large_message)

# Like ruff's defaults: folders that hold tools, environments and build output, not the user's code.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode", "__pycache__",
    "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    ".npu-audit-cache",
)
# build output folders, unless they are a Python package (`mmengine/dist/`, a project's own `build/` package)
_OUTPUT_FOLDERS = frozenset({"build", "dist"})
SOURCE_SUFFIXES = (".py", ".pyw")
KERNEL_SUFFIXES = (".cu", ".cuh")


def display_base(paths: list[Path]) -> Path:
    """What report paths are relative to: the current directory when every given path lies under it
    (ruff's habit), else the common folder of the given paths."""
    cwd = Path.cwd()
    root = common_root(paths)
    base = root if root.is_dir() else root.parent
    try:
        base.relative_to(cwd)
        return cwd
    except ValueError:
        return base


def _gitignore_spec(lines: list[str]):
    """pathspec's reading of .gitignore lines; a line it rejects (`env\\`, a Windows path with a trailing backslash:
    lollms-webui) is left out, as git leaves out a pattern it cannot read, instead of stopping the audit."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        pass
    kept = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        kept.append(line)
    return pathspec.GitIgnoreSpec.from_lines(kept)


# git reads .gitignore only for untracked files: a committed file under an ignored folder is the repository's code.
GIT_LS_FILES_TIMEOUT_S = 20


def tracked_paths(repository: Path) -> tuple[frozenset[str], frozenset[str]] | None:
    """The files git tracks in `repository` (posix paths relative to it) and every folder above them, from
    `git ls-files`; None when git is missing, refuses the folder (not a work tree, an unsafe owner) or is slow.
    core.fsmonitor is switched off: that setting would make git run a command the repository's config names."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run([git, "-c", "core.fsmonitor=false", "-C", str(repository), "ls-files", "-z",
                               "--cached", "--full-name"], capture_output=True, timeout=GIT_LS_FILES_TIMEOUT_S,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    files = frozenset(name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name)
    folders = {"/".join(parts[:i]) for name in files for parts in [name.split("/")] for i in range(1, len(parts))}
    return files, frozenset(folders)


class _GitIgnores:
    """.gitignore files (pathspec's git semantics) of the walked folders and of the folders above them up
    to the repository root; a nested file's patterns apply below its folder, and never to a file git tracks."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.specs: dict[Path, object] = {}
        self.tracked: dict[Path, tuple[frozenset[str], frozenset[str]] | None] = {}

    def _tracked(self, path: Path, is_dir: bool, repository: Path) -> bool:
        """Whether git tracks the file, or a file below the folder (read once per repository, only when a
        pattern ignores something)."""
        if repository not in self.tracked:
            self.tracked[repository] = tracked_paths(repository) if (repository / ".git").exists() else None
        known = self.tracked[repository]
        if known is None:
            return False
        try:
            rel = path.relative_to(repository).as_posix()
        except ValueError:
            return False
        return rel in known[1 if is_dir else 0]

    def _spec(self, folder: Path):
        if folder not in self.specs:
            spec = None
            for name in (".gitignore",) + ((".git/info/exclude",) if (folder / ".git").is_dir() else ()):
                try:
                    text = (folder / name).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                read = _gitignore_spec(text.splitlines())
                spec = read if spec is None else spec + read
            self.specs[folder] = spec
        return self.specs[folder]

    def chain(self, folder: Path) -> list[Path]:
        """The folder and its parents up to the repository root (the first one holding .git)."""
        out = []
        for f in (folder, *folder.parents):
            out.append(f)
            if (f / ".git").exists():
                break
        else:
            return [folder]          # not in a repository: only the walked folders' own files
        return out

    def ignored(self, path: Path, is_dir: bool, folders: list[Path]) -> bool:
        if not self.enabled:
            return False
        verdict = False
        for folder in reversed(folders):           # outer first; a nested file can re-include (!pattern)
            spec = self._spec(folder)
            if spec is None:
                continue
            try:
                rel = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            result = spec.check_file(rel + ("/" if is_dir else "")).include   # None: no pattern says
            if result is not None:
                verdict = bool(result)
        return verdict and not (folders and self._tracked(path, is_dir, folders[-1]))


@dataclass
class Discovered:
    root: Path                                 # what finding paths are relative to
    files: list[tuple[Path, str]] = field(default_factory=list)   # (absolute path, relative posix path)
    errors: list[FileError] = field(default_factory=list)


def common_root(paths: list[Path]) -> Path:
    resolved = [p.resolve() if p.exists() else p.absolute() for p in paths]
    if len(resolved) == 1:
        return resolved[0]
    return Path(os.path.commonpath([str(p) for p in resolved]))


def _rel(path: Path, root: Path) -> str:
    base = root if root.is_dir() else root.parent
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _joined(folder: str, name: str) -> str:
    """`name` inside the relative folder `folder` ("" or "." for the root)."""
    return name if folder in ("", ".") else f"{folder}/{name}"


def _below(path: Path, given: Path, given_rel: str) -> str:
    """The relative path of `path`, met by the walk below the given folder `given`, whose own relative path is
    `given_rel` (string parts, so a symbolic link on the way is kept as the walk met it)."""
    inner = path.relative_to(given).as_posix()
    return given_rel if inner == "." else _joined(given_rel, inner)


def _exclusion_matcher(patterns: tuple[str, ...]):
    """One compiled regex for all globs (fnmatch per pattern and entry dominated warm runs): a pattern
    matches the entry's name, its relative path, or a folder above it."""
    alternatives = [fnmatch.translate(p) for p in patterns] + [fnmatch.translate(p.rstrip("/") + "/*") for p in patterns]
    rx = re.compile("|".join(f"(?:{a})" for a in alternatives))
    return lambda rel, name: bool(rx.match(name) or rx.match(rel))


def discover(paths: list[Path], exclude: tuple[str, ...] = (), include_kernels: bool = True,
             respect_gitignore: bool = True) -> Discovered:
    """Walk the given files and folders. Explicitly named files are always audited (even when ignored)."""
    root = display_base(paths)
    found = Discovered(root=root)
    gitignores = _GitIgnores(respect_gitignore)
    excluded = _exclusion_matcher(tuple(p for p in DEFAULT_EXCLUDE if p not in _OUTPUT_FOLDERS) + tuple(exclude))
    suffixes = SOURCE_SUFFIXES + (KERNEL_SUFFIXES if include_kernels else ())
    # real path -> (index in found.files, reached without a symbolic link below the given folder)
    seen: dict[Path, tuple[int, bool]] = {}

    def add(path: Path, rel: str, real: Path, direct: bool) -> None:
        if real not in seen:
            seen[real] = (len(found.files), direct)
            found.files.append((path, rel))
        elif direct and not seen[real][1]:
            # A file reached first through a symlinked folder is reported under its own path once the walk
            # reaches it there (wetts' examples/*/vits -> wetts/vits).
            seen[real] = (seen[real][0], True)
            found.files[seen[real][0]] = (path, rel)

    for given in paths:
        abs_given = given.absolute()
        if not given.is_dir():
            add(abs_given, _joined(_rel(abs_given.parent.resolve(), root), abs_given.name), abs_given.resolve(), True)
            continue
        given_real = abs_given.resolve()
        # the root is a resolved path: a folder given through a symbolic link (`bench/_projects/x`, `_projects` a
        # link) is named from where it resolves, and what the walk meets below it from that name
        given_rel = _rel(given_real, root)
        visited_dirs: set[tuple[int, int]] = set()
        stack = [(abs_given, gitignores.chain(abs_given) if respect_gitignore else [])]
        # Symlinked folders are walked after every real one, so that the real folder is walked (and its files
        # named) under its own path and the link is the one reached again.
        linked: list[tuple[Path, list[Path]]] = []
        while stack or linked:
            if not stack:
                stack, linked = list(reversed(linked)), []
            folder, ignore_folders = stack.pop()
            try:
                st = folder.stat()
            except OSError as exc:
                found.errors.append(FileError(_below(folder, abs_given, given_rel), "unreadable", exc.strerror or str(exc)))
                continue
            key = (st.st_dev, st.st_ino)
            if key in visited_dirs:
                target, above = folder.resolve(), folder.parent.resolve()
                if target == above or target in above.parents:
                    found.errors.append(FileError(_below(folder, abs_given, given_rel), "symlink-loop",
                                                  "folder reached again through a symbolic link; not followed"))
                # else a link to a folder walked under its own path: its files are audited there
                continue
            visited_dirs.add(key)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                found.errors.append(FileError(_below(folder, abs_given, given_rel), "unreadable", exc.strerror or str(exc)))
                continue
            subdirs: list[tuple[Path, list[Path]]] = []
            if folder != abs_given and respect_gitignore:
                ignore_folders = [folder] + ignore_folders
            for entry in entries:
                path = Path(entry.path)
                rel = _below(path, abs_given, given_rel)
                if excluded(rel, entry.name):
                    continue
                try:
                    is_dir = entry.is_dir()
                    if not is_dir and entry.is_symlink() and not path.exists():
                        found.errors.append(FileError(rel, "unreadable", "broken symbolic link"))
                        continue
                except OSError as exc:
                    found.errors.append(FileError(rel, "unreadable", exc.strerror or str(exc)))
                    continue
                if (is_dir or entry.name.endswith(suffixes)) and gitignores.ignored(path, is_dir, ignore_folders):
                    continue
                if is_dir:
                    if entry.name in _OUTPUT_FOLDERS and not (path / "__init__.py").is_file():
                        continue
                    (linked if entry.is_symlink() else subdirs).append((path, ignore_folders))
                elif entry.name.endswith(suffixes) or (include_kernels and project_kind(entry.name, rel)):
                    try:
                        if not entry.is_file():       # FIFO, socket, device, or a link to one
                            found.errors.append(FileError(rel, "special", "not a regular file (a FIFO, "
                                                          "device or socket); not read"))
                            continue
                    except OSError as exc:
                        found.errors.append(FileError(rel, "unreadable", exc.strerror or str(exc)))
                        continue
                    try:
                        real = path.resolve(strict=True)
                    except (OSError, RuntimeError) as exc:
                        found.errors.append(FileError(rel, "symlink-loop" if isinstance(exc, RuntimeError)
                                                      else "unreadable", str(exc)))
                        continue
                    add(path, rel, real, real == given_real / path.relative_to(abs_given))
            stack.extend(reversed(subdirs))
    found.files.sort(key=lambda f: f[1])
    return found
