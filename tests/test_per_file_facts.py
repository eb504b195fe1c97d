"""Per-file facts read once in the worker (from the bytes it read, kept in the file's cache entry) and used by the
tree passes instead of reading the file again (session 9, hs9): the suppression comments of each recorded `make`
call (NPU333), and whether a Python file imports Triton / says Triton-Ascend (backends.triton_ascend_files,
crossfile's Triton modules). Each pass must give the findings it gave when it read the file itself."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.project.makefile import IGNORE_KEY, SUMMARY_KEY, make_build_findings
from auditor.rules import load_rules
from auditor.runner import run_static
from tests.test_project_t15e_families import _tree as _make_tree


def _no_read_of(monkeypatch, name: str) -> None:
    """Fail the test if anything reads a file called `name` (Path.read_text / read_bytes, os.open)."""
    import os

    real_text, real_bytes, real_open = Path.read_text, Path.read_bytes, os.open

    def check(path) -> None:
        if str(path).endswith(name):
            raise AssertionError(f"{name} was read again")

    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (check(self), real_text(self, *a, **k))[1])
    monkeypatch.setattr(Path, "read_bytes", lambda self, *a, **k: (check(self), real_bytes(self, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (check(path), real_open(path, *a, **k))[1])


def _make_findings(run) -> set[tuple[str, int]]:
    return {(Path(r.path).name, f.line) for r in run.results for f in r.findings if f.code == "NPU333"}


def test_make_calls_keep_their_suppression_comments_from_the_worker(tmp_path, monkeypatch):
    root = _make_tree(tmp_path)
    script = root / "scripts" / "train_small.sh"
    # a file-level form for another code, and a noqa naming NPU333 on a second CUDA call
    script.write_text(script.read_text().replace("set -e\n", "set -e\n# npu-audit: file-ignore[NPU001]\n")
                      + "make -C kernels ptx  # noqa: NPU333\n")
    cold = run_static([root], jobs=1)
    assert ("train_small.sh", 5) in _make_findings(cold) and ("train_small.sh", 9) in _make_findings(cold)
    # line 11: `make bench_kernels  # npu-audit: ignore[NPU333]`, line 12: the noqa form; both silenced
    assert not {ln for name, ln in _make_findings(cold) if name == "train_small.sh"} & {11, 12}
    result = next(r for r in cold.results if r.path.endswith("train_small.sh"))
    calls = {c["line"]: c[IGNORE_KEY] for c in result.summary[SUMMARY_KEY]}
    assert calls[11] == [["NPU001"], ["NPU333"]] and calls[12] == [["NPU001"], ["NPU333"]]
    assert calls[5] == [["NPU001"]]                       # the file-level form applies to every line

    # the tree pass decides from the kept comments: the script is not read again, the findings are the same
    _no_read_of(monkeypatch, "train_small.sh")
    rule = next(r for r in load_rules() if r.code == "NPU333")
    again = make_build_findings(result, root, rule)
    assert {f.line for f in again} == {ln for name, ln in _make_findings(cold) if name == "train_small.sh"}


def test_a_summary_without_the_kept_comments_reads_the_file_as_before(tmp_path):
    root = _make_tree(tmp_path)
    cold = run_static([root], jobs=1)
    result = next(r for r in cold.results if r.path.endswith("train_small.sh"))
    for call in result.summary[SUMMARY_KEY]:
        del call[IGNORE_KEY]                              # a caller that built the summary itself
    rule = next(r for r in load_rules() if r.code == "NPU333")
    lines = {f.line for f in make_build_findings(result, root, rule)}
    assert lines == {ln for name, ln in _make_findings(cold) if name == "train_small.sh"} and 10 not in lines


def test_warm_run_gives_the_cold_make_findings_without_reading_the_script(tmp_path, monkeypatch):
    (tmp_path / "tree").mkdir()
    root = _make_tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    # (other tree passes may open the script: only the make pass's old read, Path.read_text, is refused here)
    real_text = Path.read_text

    def read_text(self, *a, **k):
        assert not str(self).endswith("train_small.sh"), "the make pass read the script again"
        return real_text(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", read_text)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results)
    assert _make_findings(warm) == _make_findings(cold) and ("train_small.sh", 11) not in _make_findings(warm)


@pytest.mark.parametrize("text, expected", [
    ("make all\n", [[]]),
    ("# npu-audit: file-ignore\nmake all\n", [[None]]),
    ("make all  # npu-audit: ignore\n", [[None]]),
    ("make all  # noqa\n", [[]]),                          # a bare noqa is the linter's, not ours
])
def test_kept_comments_follow_the_suppression_forms(tmp_path, text, expected):
    (tmp_path / "Makefile").write_text("all: k.cu\n\tnvcc -o all k.cu\n")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "build.sh").write_text("#!/bin/bash\n" + text)
    run = run_static([tmp_path], jobs=1)
    result = next(r for r in run.results if r.path == "build.sh")
    assert [c[IGNORE_KEY] for c in result.summary[SUMMARY_KEY]] == expected
    assert bool(_make_findings(run)) == (expected == [[]])
