"""bench/project_files.py fetch exports a split's pinned commits from local git mirrors (`--mirrors`, the `fetch`
snapshots of a machine without GitHub access): the tree at the pinned commit, HEAD at that commit, file names that are
not ASCII kept, and a source whose mirror lacks the commit left to the GitHub path."""
from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _bench(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("project_files_under_test", BENCH / "project_files.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.HERE, mod.TREES, mod.SPLIT = tmp_path / "splits", tmp_path / "trees", "mirrored"
    return mod


def test_a_pinned_commit_is_exported_from_its_mirror(tmp_path):
    work = tmp_path / "upstream"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / "Dockerfile").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    (work / "notebooks").mkdir()
    (work / "notebooks" / "guía de traducción.txt").write_text("GPU\n")
    _git("add", "-A", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=work)
    pinned = _git("rev-parse", "HEAD", cwd=work)
    (work / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two", cwd=work)
    mirrors = tmp_path / "mirrors"
    _git("clone", "-q", "--bare", str(work), str(mirrors / "someone+tool" / "repo"), cwd=tmp_path)

    mod = _bench(tmp_path)
    (mod.HERE / "mirrored").mkdir(parents=True)
    (mod.HERE / "mirrored" / "sources.json").write_text(json.dumps({"sources": [
        {"name": "tool", "url": "https://github.com/someone/tool", "commit": pinned}]}))
    assert mod.fetch(mirrors) == 0
    tree = mod.TREES / "tool"
    assert (tree / "Dockerfile").read_text() == "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"   # the pinned commit's
    assert (tree / "notebooks" / "guía de traducción.txt").is_file()
    assert _git("rev-parse", "HEAD", cwd=tree) == pinned


def test_a_mirror_without_the_commit_is_not_used(tmp_path):
    empty = tmp_path / "mirrors" / "someone+tool" / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
    mod = _bench(tmp_path)
    assert mod._mirror_gitdir(tmp_path / "mirrors", "https://github.com/someone/tool") == empty
    assert not mod._export_from_mirror(empty, tmp_path / "trees" / "tool", "0" * 40)
    assert not (tmp_path / "trees" / "tool").exists()
