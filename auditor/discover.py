"""Find the files to audit under the paths a user gives, without ever following a symlink loop."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor.project import project_kind
from auditor.report import FileError

# Like ruff's defaults: folders that hold tools, environments and build output, not the user's code.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode", "__pycache__",
    "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    ".npu-audit-cache",
)
SOURCE_SUFFIXES = (".py", ".pyw")
KERNEL_SUFFIXES = (".cu", ".cuh")


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


def _exclusion_matcher(patterns: tuple[str, ...]):
    """One compiled regex for all globs (fnmatch per pattern and entry dominated warm runs): a pattern
    matches the entry's name, its relative path, or a folder above it."""
    alternatives = [fnmatch.translate(p) for p in patterns] + [fnmatch.translate(p.rstrip("/") + "/*") for p in patterns]
    rx = re.compile("|".join(f"(?:{a})" for a in alternatives))
    return lambda rel, name: bool(rx.match(name) or rx.match(rel))


def discover(paths: list[Path], exclude: tuple[str, ...] = (), include_kernels: bool = True) -> Discovered:
    """Walk the given files and folders. Explicitly named files are always audited."""
    root = common_root(paths)
    found = Discovered(root=root)
    excluded = _exclusion_matcher(DEFAULT_EXCLUDE + tuple(exclude))
    suffixes = SOURCE_SUFFIXES + (KERNEL_SUFFIXES if include_kernels else ())
    seen: set[Path] = set()

    for given in paths:
        abs_given = given.absolute()
        if not given.is_dir():
            real = abs_given.resolve()
            if real not in seen:
                seen.add(real)
                found.files.append((abs_given, _rel(abs_given, root)))
            continue
        visited_dirs: set[tuple[int, int]] = set()
        stack = [abs_given]
        while stack:
            folder = stack.pop()
            try:
                st = folder.stat()
            except OSError as exc:
                found.errors.append(FileError(_rel(folder, root), "unreadable", exc.strerror or str(exc)))
                continue
            key = (st.st_dev, st.st_ino)
            if key in visited_dirs:
                found.errors.append(FileError(_rel(folder, root), "symlink-loop",
                                              "folder reached again through a symbolic link; not followed"))
                continue
            visited_dirs.add(key)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                found.errors.append(FileError(_rel(folder, root), "unreadable", exc.strerror or str(exc)))
                continue
            subdirs = []
            for entry in entries:
                path = Path(entry.path)
                rel = _rel(path, root)
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
                if is_dir:
                    subdirs.append(path)
                elif entry.name.endswith(suffixes) or (include_kernels and project_kind(entry.name)):
                    try:
                        real = path.resolve(strict=True)
                    except (OSError, RuntimeError) as exc:
                        found.errors.append(FileError(rel, "symlink-loop" if isinstance(exc, RuntimeError)
                                                      else "unreadable", str(exc)))
                        continue
                    if real in seen:
                        continue
                    seen.add(real)
                    found.files.append((path, rel))
            stack.extend(reversed(subdirs))
    found.files.sort(key=lambda f: f[1])
    return found
