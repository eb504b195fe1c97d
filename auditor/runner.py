"""The static audit of a tree: discovery, a process pool over files, the result cache, and the merge."""
from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from auditor.cache import ResultCache, engine_key
from auditor.discover import discover
from auditor.findings import Finding
from auditor.report import FileError
from auditor.rules import load_rules
from auditor.static.engine import MAX_FILE_BYTES, FileResult, StaticEngine

# Below this many files a pool costs more to start than it saves.
_POOL_MIN_FILES = 24
_CHUNK = 16


@dataclass
class StaticRun:
    root: Path
    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    cached_files: int = 0
    duration_s: float = 0.0


# -- worker side ---------------------------------------------------------------------------------

_ENGINE: StaticEngine | None = None


def _init_worker(product: str, coverage_apis: dict[str, dict] | None, max_bytes: int) -> None:
    global _ENGINE
    _ENGINE = StaticEngine(load_rules(), product=product, coverage_apis=coverage_apis, max_bytes=max_bytes)


def _analyze_one(engine: StaticEngine, path: str, rel: str) -> tuple[FileResult, tuple[int, int, str] | None]:
    p = Path(path)
    try:
        st = p.stat()
        if st.st_size > engine.max_bytes:
            return engine.analyze_path(p, rel), None
        data = p.read_bytes()
    except OSError as exc:
        return FileResult(rel, error=FileError(rel, "unreadable", exc.strerror or str(exc))), None
    stamp = (st.st_size, st.st_mtime_ns, hashlib.sha1(data).hexdigest())
    return engine.analyze_bytes(data, rel), stamp


def _analyze_chunk(chunk: list[tuple[str, str]]):
    assert _ENGINE is not None
    return [(path, *_analyze_one(_ENGINE, path, rel)) for path, rel in chunk]


# -- parent side ---------------------------------------------------------------------------------

def _to_payload(result: FileResult) -> dict[str, Any]:
    return {
        "findings": [f.to_dict() for f in result.findings],
        "error": result.error.to_dict() if result.error else None,
        "lines": result.lines,
        "suppressed": result.suppressed,
    }


def _from_payload(rel: str, entry: dict[str, Any]) -> FileResult:
    findings = [Finding.from_dict({**d, "path": rel}) for d in entry["findings"]]
    err = entry.get("error")
    error = FileError(**{**err, "path": rel}) if err else None
    return FileResult(rel, findings=findings, error=error, lines=entry["lines"], suppressed=entry["suppressed"])


def run_static(
    paths: list[Path],
    *,
    product: str = "a2",
    coverage_apis: dict[str, dict] | None = None,
    cache_key_parts: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    jobs: int | None = None,
    cache_dir: Path | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> StaticRun:
    start = time.perf_counter()
    found = discover(paths, exclude=exclude)
    run = StaticRun(root=found.root, errors=list(found.errors))
    cache = ResultCache(cache_dir, engine_key(product, str(max_bytes), *cache_key_parts)) if cache_dir else None

    todo: list[tuple[str, str]] = []
    for path, rel in found.files:
        entry = cache.get(path) if cache else None
        if entry is not None:
            run.results.append(_from_payload(rel, entry))
            run.cached_files += 1
        else:
            todo.append((str(path), rel))
    total = len(found.files)
    done = run.cached_files
    if progress:
        progress(done, total)

    def collect(items) -> None:
        nonlocal done
        for path, result, stamp in items:
            run.results.append(result)
            if cache is not None and stamp is not None:
                cache.put(Path(path), stamp, _to_payload(result))
        done += len(items)
        if progress:
            progress(done, total)

    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if workers > 1 and len(todo) >= _POOL_MIN_FILES:
        chunks = [todo[i:i + _CHUNK] for i in range(0, len(todo), _CHUNK)]
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), initializer=_init_worker,
                                 initargs=(product, coverage_apis, max_bytes)) as pool:
            for items in pool.map(_analyze_chunk, chunks):
                collect(items)
    else:
        engine = StaticEngine(load_rules(), product=product, coverage_apis=coverage_apis, max_bytes=max_bytes)
        for path, rel in todo:
            collect([(path, *_analyze_one(engine, path, rel))])

    if cache is not None:
        cache.save()
    run.results.sort(key=lambda r: r.path)
    run.errors.extend(r.error for r in run.results if r.error is not None)
    run.duration_s = time.perf_counter() - start
    return run
