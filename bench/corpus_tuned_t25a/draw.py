"""tuned_t25a's draw (bench/corpus_tuned_t25a/SELECTION.md): per code base, the audited *.py files of 20-800 lines
with at least 2 kernel / GPU-library lines, in the split's seeded order; the first 4 of each code base."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import recall  # noqa: E402
import select_test as st  # noqa: E402

WORDS = re.compile(st.TOPUP_WORDS["kernel"] + "|" + st.TOPUP_WORDS["third_party"]
                   + r"|numba|pycuda|taichi|\bti\.(?:kernel|func|init)|import warp|\bwp\.|RawKernel|RawModule"
                   r"|ElementwiseKernel|SourceModule|cuda\.jit|\.cu['\"]", re.I)


def pools() -> list[tuple[str, list[str]]]:
    """(code base, its pool in the seeded order) for each code base of sources.json."""
    out = []
    for src in st.main_sources("tuned_t25a"):
        root = recall.source_dir(src["name"], src["version"])
        audited = st._audited_paths(root)
        pool = []
        for f in sorted(root.rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            if rel not in audited or st.EXCLUDED_DIRS & set(rel.split("/")[:-1]):
                continue
            lines = f.read_text(errors="replace").splitlines()
            if 20 <= len(lines) <= 800 and sum(1 for line in lines if WORDS.search(line)) >= 2:
                pool.append(rel)
        out.append((src["name"], st.seeded_order(src["name"], pool, st.SEED_PREFIXES["tuned_t25a"])))
    return out


def drawn() -> list[tuple[str, str]]:
    cap = st.MAX_FILES_PER_CODE_BASE["tuned_t25a"]
    return [(name, path) for name, order in pools() for path in order[:cap]]


if __name__ == "__main__":
    for name, order in pools():
        print(name, len(order), *order[:st.MAX_FILES_PER_CODE_BASE["tuned_t25a"]], sep="\n  ")
