"""Per-file result cache: one JSON index per engine key (tool version + rules + tables + target), each entry
keyed by the file's absolute path and checked by size + mtime, then by content hash. A warm run stats files
and reads one index; it parses nothing."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.data import rules_dir, tables_dir

DEFAULT_CACHE_DIR = ".npu-audit-cache"


def engine_key(*parts: str) -> str:
    """Changes whenever anything that shapes results changes: tool version, rule files, tables, target."""
    h = hashlib.sha1(__version__.encode())
    for folder, pattern in ((rules_dir(), "*.yaml"), (tables_dir(), "*.json")):
        for path in sorted(folder.rglob(pattern)):      # op_tables/api/*.json too
            st = path.stat()
            h.update(f"{path.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    for part in parts:
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:20]


class ResultCache:
    def __init__(self, directory: Path, key: str) -> None:
        self.directory = directory
        self.path = directory / f"results-{key}.json"
        self.entries: dict[str, Any] = {}
        self.dirty = False
        try:
            self.entries = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}

    def get(self, path: Path) -> dict[str, Any] | None:
        entry = self.entries.get(str(path))
        if entry is None:
            return None
        try:
            st = path.stat()
        except OSError:
            return None
        if entry["size"] == st.st_size and entry["mtime"] == st.st_mtime_ns:
            return entry
        try:
            digest = hashlib.sha1(path.read_bytes()).hexdigest()
        except OSError:
            return None
        if digest == entry["sha1"]:
            entry["mtime"] = st.st_mtime_ns
            self.dirty = True
            return entry
        return None

    def put(self, path: Path, stamp: tuple[int, int, str], payload: dict[str, Any]) -> None:
        """stamp = (size, mtime_ns, sha1) of the bytes that were analysed."""
        size, mtime, digest = stamp
        self.entries[str(path)] = {"size": size, "mtime": mtime, "sha1": digest, **payload}
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n")
            for old in self.directory.glob("results-*.json"):   # one index per directory: drop stale keys
                if old != self.path:
                    old.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written only costs speed
