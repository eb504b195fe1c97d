# tuned_t25a's draw (bench/corpus_tuned_t25a/SELECTION.md)
import re
import sys
sys.path.insert(0, "bench")
import recall  # noqa: E402
import select_test as st  # noqa: E402
WORDS = re.compile(st.TOPUP_WORDS["kernel"] + "|" + st.TOPUP_WORDS["third_party"]
                   + r"|numba|pycuda|taichi|\bti\.(?:kernel|func|init)|import warp|\bwp\.|RawKernel|RawModule"
                   r"|ElementwiseKernel|SourceModule|cuda\.jit|\.cu['\"]", re.I)
for src in st.main_sources("tuned_t25a"):
    root = recall.source_dir(src["name"], src["version"])
    audited = st._audited_paths(root)
    pool = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        if rel not in audited or st.EXCLUDED_DIRS & set(rel.split("/")[:-1]):
            continue
        lines = f.read_text(errors="replace").splitlines()
        if 20 <= len(lines) <= 800 and sum(1 for l in lines if WORDS.search(l)) >= 2:
            pool.append(rel)
    order = st.seeded_order(src["name"], pool, st.SEED_PREFIXES["tuned_t25a"])
    print(src["name"], len(pool), *order[:4], sep="\n  ")
