#!/usr/bin/env python3
"""Draw the blind test split's files by the rule in bench/corpus_test/SELECTION.md.

    python bench/select_test.py              list the drawn files (2 per code base)
    python bench/select_test.py --per 3      the first 3 per code base (the rule's next round)
    python bench/select_test.py --all        every eligible file in each code base's seeded order

Deterministic: the corpus comes from pinned archives checked by sha256 (`recall.py --split test
fetch`), eligible files are sorted and shuffled with a seed derived from the code base's name.
Run it before labelling; it never runs the auditor.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recall  # noqa: E402  (bench/ is not a package)

# The fixed rule (SELECTION.md); changing any of these makes a different split.
GPU_WORDS = ("cuda", "nccl", "cudnn", "apex", "flash_attn", "flash-attn", "flash_attention",
             "xformers", "triton", "fp16", "bf16", "float16", "bfloat16", "fp8", "float8", "tf32",
             "nvidia", "nvcc", "nvml", "transformer_engine", "bitsandbytes", "autocast", "sdpa",
             "cpp_extension")
GPU_RE = re.compile("|".join(re.escape(w) for w in GPU_WORDS), re.IGNORECASE)
SEED_PREFIX = "npu-audit-test-split-1:"
MIN_MATCHING_LINES = 3
MIN_LINES, MAX_LINES = 20, 400
EXCLUDED_DIRS = {"test", "tests", "testing"}
PER_CODE_BASE = 2


def eligible(root: Path) -> list[str]:
    out = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if EXCLUDED_DIRS & set(rel.parts[:-1]):
            continue
        lines = f.read_text(errors="replace").splitlines()
        if not MIN_LINES <= len(lines) <= MAX_LINES:
            continue
        if sum(1 for line in lines if GPU_RE.search(line)) >= MIN_MATCHING_LINES:
            out.append(rel.as_posix())
    return out


def seeded_order(name: str, paths: list[str]) -> list[str]:
    paths = sorted(paths)
    random.Random(SEED_PREFIX + name).shuffle(paths)
    return paths


def draw(per: int | None, split: str = "test") -> list[tuple[dict, str]]:
    drawn = []
    for src in recall.load_sources(split):
        root = recall.source_dir(src["name"], src["version"])
        if not root.exists():
            raise recall.BenchError(f"{root} missing: run `python bench/recall.py --split {split} fetch`")
        order = seeded_order(src["name"], eligible(root))
        drawn += [(src, p) for p in (order if per is None else order[:per])]
    return drawn


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per", type=int, default=PER_CODE_BASE, help="files per code base")
    ap.add_argument("--all", action="store_true", help="every eligible file, in seeded order")
    ap.add_argument("--split", choices=["test", "fresh", "fresh2"], default="test",
                    help="which blind split's code bases (same rule for both)")
    args = ap.parse_args(argv)
    try:
        for src, path in draw(None if args.all else args.per, args.split):
            print(f"{src['name']}\t{src['version']}\t{path}")
    except recall.BenchError as e:
        print(f"select_test.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
