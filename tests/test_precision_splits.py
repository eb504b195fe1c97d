"""The precision bench's splits (bench/precision/<split>/sources.json): a held-out split's trees are trees no other
split has drawn from, so that its figure is held out. Recorded exceptions: heldout6 pinned five trees at the commits
earlier splits had pinned and tuned on (found after its draw; docs/precision.md reports heldout6's held-out figure
on its other three trees)."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

PRECISION = Path(__file__).resolve().parent.parent / "bench" / "precision"
KNOWN_REUSE = {("FlagOpen/FlagScale", frozenset({"heldout2", "heldout6"}))} | {
    (repo, frozenset({"heldout", "heldout6"}))
    for repo in ("InternLM/lmdeploy", "vllm-project/vllm-ascend", "DeepLink-org/dlinfer", "InternLM/InternEvo")}


def _sources() -> dict[str, list[dict]]:
    splits = {"tuned": PRECISION} | {d.name: d for d in PRECISION.iterdir() if (d / "sources.json").is_file()}
    return {name: json.loads((d / "sources.json").read_text())["sources"] for name, d in splits.items()}


def _repo(src: dict) -> str:
    return src.get("repo") or src.get("package") or src["name"]


def test_no_two_precision_splits_draw_from_one_repository_except_the_recorded_one():
    users: dict[str, set[str]] = defaultdict(set)
    for split, sources in _sources().items():
        for src in sources:
            users[_repo(src).lower()].add(split)
    shared = {(repo, frozenset(splits)) for repo, splits in users.items() if len(splits) > 1}
    assert shared == {(repo.lower(), splits) for repo, splits in KNOWN_REUSE}, shared


def test_heldout6_says_which_trees_are_not_held_out():
    comment = json.loads((PRECISION / "heldout6" / "sources.json").read_text())["comment"]
    assert "They are NOT held out" in comment
    assert all(name in comment for name in ("lmdeploy", "vllm-ascend", "dlinfer", "InternEvo", "FlagScale"))
