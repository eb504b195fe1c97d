"""The benches audit exported trees as their users audit a checkout: every exported file is tracked, so a
.gitignore pattern does not hide it (git reads .gitignore for untracked files only)."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.discover import discover

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("recall_bench_checkout", REPO / "bench" / "recall.py")
recall = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = recall   # dataclasses look their module up here
spec.loader.exec_module(recall)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_an_exported_tree_is_marked_a_checkout_with_every_file_tracked(tmp_path):
    # MAML-Pytorch's shape (test124): `.gitignore` lists `backup`, whose committed files hold labelled lines
    tree = tmp_path / "MAML-Pytorch-1234"
    (tree / "backup").mkdir(parents=True)
    (tree / ".gitignore").write_text("backup\n__pycache__\n")
    (tree / "meta.py").write_text("import torch\nnet = net.cuda()\n")
    (tree / "backup" / "mainv0.py").write_text("import torch\nnet = net.cuda()\n")
    before = sorted(rel for _, rel in discover([tree]).files)
    recall.mark_checkout(tree)
    recall.mark_checkout(tree)               # again: the index is kept, not rewritten
    after = sorted(rel for _, rel in discover([tree]).files)
    listed = subprocess.run(["git", "-C", str(tree), "ls-files"], capture_output=True, text=True).stdout.split()
    assert before == ["meta.py"]
    assert after == ["backup/mainv0.py", "meta.py"]
    assert sorted(listed) == [".gitignore", "backup/mainv0.py", "meta.py"]
    # a file added after the export is untracked: the tree's .gitignore applies to it as in a checkout
    (tree / "backup" / "scratch.py").write_text("x = 1\n")
    assert sorted(rel for _, rel in discover([tree]).files) == ["backup/mainv0.py", "meta.py"]


def test_the_benches_work_folders_are_ignored_as_folders_and_as_links():
    # a worktree that links bench/_work to the main checkout must not commit the link: on checkout it would replace
    # the ignored folder (git removes ignored files in its way) and its exported trees with it
    for name in ("bench/_work", "bench/_corpus", "bench/_projects"):
        done = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", "-q", name])
        if done.returncode == 128:
            pytest.skip("not a git checkout")
        assert done.returncode == 0, f"{name} is not ignored"
