"""The false-positive classes the held-out precision draw (bench/precision/heldout/) showed, each on code shaped
like the trees it came from: a project's own package and op namespace (bitsandbytes), code for another backend
(text-generation-inference's Gaudi / ROCm / IPEX paths, dlinfer's MetaX vendor), Triton-Ascend kernels in
Ascend-named packages (vllm-ascend, dlinfer), CUDA APIs rebound to the NPU, guarded optional packages used in
their guarded block, variables that may hold "npu", and Gluon kernels."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static.backends import path_backends
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _findings, write_source as _write


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_the_trees_own_package_and_op_namespace_are_not_dependencies(tmp_path):
    _write(tmp_path, "bitsandbytes/__init__.py", "from . import functional\n")
    _write(tmp_path, "bitsandbytes/functional.py", """\
        import torch
        from bitsandbytes.utils import sync_gpu

        def quantize_4bit(A, blocksize=64):
            out, absmax = torch.ops.bitsandbytes.quantize_4bit.default(A, blocksize, "nf4", torch.uint8)
            sync_gpu(out)
            torch.cuda.synchronize()
            return out, absmax
        """)
    _write(tmp_path, "tests/test_functional.py", """\
        import bitsandbytes as bnb
        import flash_attn

        def test_roundtrip():
            q, s = bnb.functional.quantize_4bit(A)
            return flash_attn.flash_attn_func(q, q, q)
        """)
    run = run_static([tmp_path], jobs=1)
    found = {(r.path, f.line, f.code) for r in run.results for f in r.findings}
    assert ("bitsandbytes/functional.py", 7, "NPU002") in found          # its CUDA calls are still reported
    assert ("tests/test_functional.py", 2, "NPU346") in found            # flash_attn is a real dependency
    assert not any(code in ("NPU401", "NPU380") for _, _, code in found), found


def test_branches_classes_and_files_for_another_backend_are_info(engine):
    src = """\
        import torch
        from vllm import _custom_ops as ops
        from text_generation_server.utils.import_utils import SYSTEM

        def rotary(query, key, cos, sin):
            if SYSTEM == "cuda":
                torch.cuda.synchronize()
            elif SYSTEM == "rocm":
                ops.rotary_embedding(query, key, 64, cos, sin, False)
            if not is_xpu():
                torch.cuda.synchronize()

        class FastLinearROCm(torch.nn.Module):
            def forward(self, inp):
                return ops.wvSpltK(self.weight, inp, self.cu_count)
        """
    by_line = _findings(engine, src)
    assert {f.severity for f in by_line[9]} == {"info"}
    assert {f.severity for f in by_line[15]} == {"info"}
    # behind `SYSTEM == "cuda"` the call runs only on CUDA: a warning (the comparison is the finding that gates,
    # auditor/static/gates.py); after a negated test it runs on Ascend too: an error
    assert by_line[7][0].severity == "warning" and by_line[11][0].severity == "error"
    gaudi = _findings(engine, "import torch\ntorch.cuda.empty_cache()\n",
                      "backends/gaudi/server/text_generation_server/layers/gptq/quantize.py")
    assert gaudi[2][0].severity == "info" and gaudi[2][0].fix == "none"
    assert path_backends("server/layers/gptq/ipex.py") == {"xpu"}
    assert path_backends("dlinfer/vendor/maca/fused_moe.py") == {"maca"}
    assert path_backends("lmdeploy/pytorch/kernels/cuda/pagedattention.py") == {"cuda"}


def test_triton_and_op_libraries_in_ascend_code_are_info_other_cuda_stays(engine):
    src = """\
        import torch
        from vllm.triton_utils import tl, triton

        @triton.jit
        def muls_add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pass

        def muls_add(x, y, scale):
            torch.ops.vllm.muls_add(x, y, scale)
            torch.cuda.synchronize()
        """
    by_line = _findings(engine, src, "vllm_ascend/ops/triton/muls_add.py")
    assert by_line[4][0].severity == "info" and "Triton-Ascend" in by_line[4][0].message
    assert by_line[9][0].severity == "info"
    assert by_line[10][0].severity == "error"
    plain = _findings(engine, src, "myproj/ops/muls_add.py")
    assert plain[4][0].severity == "warning" and plain[9][0].severity == "error"


def test_cuda_apis_rebound_to_the_npu_are_not_uses(engine):
    src = """\
        import torch
        import torch_npu

        def _torch_cuda_wrapper():
            try:
                torch.cuda.Stream = torch.npu.Stream
                torch.cuda.default_stream = torch.npu.default_stream
                yield
            finally:
                torch.cuda.Stream = _StreamPlaceholder
                torch.backends.cudnn.benchmark = True
                torch.cuda.synchronize()
        """
    by_line = _findings(engine, src)
    assert not ({6, 7, 10} & set(by_line)), by_line
    assert 11 in by_line and 12 in by_line


def test_guarded_package_used_in_its_guarded_block_is_a_warning(engine):
    src = """\
        def build_embedding(use_flash_attn, vocab_size, hidden_size):
            if not use_flash_attn:
                return Embedding1D(vocab_size, hidden_size)
            else:
                from flash_attn.modules.embedding import ParallelGPT2Embeddings

                return ParallelGPT2Embeddings(embed_dim=hidden_size, vocab_size=vocab_size)

        import flash_attn

        def attn(q, k, v):
            return flash_attn.flash_attn_func(q, k, v)
        """
    by_line = _findings(engine, src)
    assert {f.severity for f in by_line[5] + by_line[7]} == {"warning"}
    assert by_line[12][0].severity == "error"       # an unguarded use of an unguarded import


def test_variables_that_may_name_the_npu_and_dtype_names_passed_along(engine):
    src = """\
        import torch

        if hasattr(torch, "npu") and torch.npu.is_available():
            DEVICE = "npu"
        else:
            DEVICE = "cuda"
        FALLBACK = "cuda"

        def make(rows, quantize=None):
            if quantize is None:
                quantize = "fp8"
            load(quantize=quantize)
            a = torch.tensor(rows, device=DEVICE)
            b = torch.tensor(rows, device=FALLBACK)
            return a, b
        """
    by_line = _findings(engine, src)
    # the choices are the findings; their uses are not findings of their own (lead decision 4, session 21)
    assert 6 in by_line and 7 in by_line
    assert 13 not in by_line and 14 not in by_line
    assert 11 in by_line and 12 not in by_line       # the fp8 name is reported where it is written


def test_gluon_kernels_are_errors(engine):
    src = """\
        from triton.experimental import gluon
        from triton.experimental.gluon import language as gl
        from triton.experimental.gluon.language.nvidia.hopper import tma

        @gluon.jit
        def load_tile(a_desc, smem, bar):
            tma.async_copy_global_to_shared(a_desc, [0, 0], bar, smem)
        """
    by_line = _findings(engine, src)
    assert by_line[7][0].code == "NPU373" and by_line[7][0].severity == "error"


def test_heldout_bench_data_is_pinned_labelled_and_scored():
    import importlib.util
    import json

    bench = Path(__file__).resolve().parents[1] / "bench"
    spec = importlib.util.spec_from_file_location("precision_bench", bench / "precision.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc = json.loads((bench / "precision" / "heldout" / "sources.json").read_text())
    assert doc["seed"] == 1111 and doc["per_tree"] == 26 and len(doc["sources"]) >= 6
    assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] for s in doc["sources"])
    for name in ("labels.csv", "labels_after.csv"):
        mod.use_split("heldout")
        mod.LABELS_FILE = bench / "precision" / "heldout" / name
        rows = mod.read_labels()
        assert len(rows) >= 150 and all(r["label"] in ("true", "false") and r["reason"] for r in rows)
        assert all(r["tool_commit"] for r in rows)
        result = mod.score(rows)
        assert result["labelled"] == len(rows)
        assert set(result["by_kind"]) <= {"python", "cuda source", "project file"}
    with (bench / "precision" / "heldout" / "labels.csv").open(newline="") as fh:
        untuned = mod.score(list(mod.csv.DictReader(fh)))
    assert (untuned["true"], untuned["labelled"]) == (77, 156)     # the held-out figure the docs quote


def _bench_module():
    import importlib.util

    bench = Path(__file__).resolve().parents[1] / "bench"
    spec = importlib.util.spec_from_file_location("precision_bench", bench / "precision.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_any_folder_with_sources_json_is_a_split(tmp_path, monkeypatch):
    mod = _bench_module()
    (tmp_path / "sources.json").write_text('{"sources": [], "seed": 5}')
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "sources.json").write_text('{"sources": [], "seed": 2026, "per_tree": 26}')
    (tmp_path / "notes").mkdir()                      # no sources.json: not a split
    monkeypatch.setattr(mod, "DATA", tmp_path)
    assert set(mod.splits()) == {"tuned", "fresh"}
    mod.use_split("fresh")
    assert mod.SEED == 2026 and mod.LABELS_FILE == tmp_path / "fresh" / "labels.csv"
    with pytest.raises(mod.BenchError, match="unknown split 'notes'"):
        mod.use_split("notes")
    assert mod.main(["--split", "bogus", "score"]) == 2


def test_heldout2_is_pinned_before_any_draw():
    import json

    mod = _bench_module()
    doc = json.loads((mod.DATA / "heldout2" / "sources.json").read_text())
    assert doc["seed"] == 2026 and doc["per_tree"] == 26 and len(doc["sources"]) == 6
    assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] for s in doc["sources"])
    # the heldout2 split is reserved pool C: no other precision split uses its trees
    others = {s["repo"] for name in ("heldout",) for s in json.loads((mod.DATA / name / "sources.json").read_text())["sources"]}
    assert not others & {s["repo"] for s in doc["sources"]}


def test_export_leaves_out_blobs_a_partial_mirror_lacks(tmp_path):
    import subprocess
    import tarfile

    mod = _bench_module()
    repo = tmp_path / "r"
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True)  # noqa: E731
    repo.mkdir()
    run("init", "-q")
    (repo / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    (repo / "tokenizer.json").write_text("{}" * 1000)
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    commit = run("rev-parse", "HEAD").stdout.strip()
    blob = run("rev-parse", "HEAD:tokenizer.json").stdout.strip()
    gitdir = repo / ".git"
    (gitdir / "objects" / blob[:2] / blob[2:]).unlink()   # drop the large blob, as a size-limited snapshot does
    import recall   # the export code lives in bench/recall.py (precision.py puts bench/ on sys.path)
    assert recall.absent_blobs(gitdir, commit) == ["tokenizer.json"]
    archive = tmp_path / "r.tar"
    src = {"repo": "o/r", "commit": commit}
    mirrors = tmp_path / "m"
    (mirrors / "o+r").mkdir(parents=True)
    (mirrors / "o+r" / "repo").symlink_to(gitdir)
    mod.git_archive(src, archive, mirrors)
    with tarfile.open(archive) as tf:
        assert tf.getnames() == ["train.py"]


def test_k11_tuning_sample_and_heldout_redraw_are_labelled():
    mod = _bench_module()
    for split, names in (("tuned_k11", ("labels.csv", "labels_after.csv")), ("heldout", ("labels_k11.csv",))):
        mod.use_split(split)
        for name in names:
            mod.LABELS_FILE = mod.DATA / split / name
            rows = mod.read_labels()
            assert len(rows) >= 100 and all(r["label"] in ("true", "false") and r["reason"] for r in rows)
            assert mod.score(rows)["labelled"] == len(rows)


def test_combine_merges_labellers_copies_cell_by_cell_and_refuses_conflicts(tmp_path, monkeypatch, capsys):
    mod = _bench_module()
    base = {"tree": "t-1", "col": 4, "symbol": "torch.cuda.synchronize", "severity": "error",
            "text": "torch.cuda.synchronize()", "label": "", "reason": "", "tool_commit": "abc"}
    sample = [{**base, "path": "a.py", "line": 3, "code": "NPU002"},
              {**base, "path": "b/c.py", "line": 9, "code": "NPU002"}]
    monkeypatch.setattr(mod, "LABELS_FILE", tmp_path / "labels.csv")
    mod.write_labels(sample)

    def copy(name: str, labels: dict) -> Path:
        monkeypatch.setattr(mod, "LABELS_FILE", tmp_path / name)
        mod.write_labels([{**r, **labels.get(r["path"], {})} for r in sample])
        monkeypatch.setattr(mod, "LABELS_FILE", tmp_path / "labels.csv")
        return tmp_path / name

    first = copy("first.csv", {"a.py": {"label": "true", "reason": "plain CUDA sync"}})
    second = copy("second.csv", {"b/c.py": {"label": "false", "reason": "inside the cuda backend module"}})
    assert mod.main(["--labels", str(tmp_path / "labels.csv"), "combine", str(first), str(second)]) == 0
    rows = {r["path"]: r for r in mod.read_labels()}
    assert (rows["a.py"]["label"], rows["b/c.py"]["label"]) == ("true", "false")
    assert rows["b/c.py"]["reason"] == "inside the cuda backend module"

    # a second labeller who disagrees on a row someone else labelled stops the merge, naming both
    other = copy("other.csv", {"a.py": {"label": "false", "reason": "test file"}})
    mod.write_labels(sample)
    assert mod.main(["--labels", str(tmp_path / "labels.csv"), "combine", str(first), str(other)]) == 2
    assert "first.csv says true" in capsys.readouterr().err
    # a copy drawn from another sample is refused rather than merged by position
    monkeypatch.setattr(mod, "LABELS_FILE", tmp_path / "stale.csv")
    mod.write_labels(sample[:1])
    assert mod.main(["--labels", str(tmp_path / "labels.csv"), "combine", str(tmp_path / "stale.csv")]) == 2
    assert "not the sample's rows" in capsys.readouterr().err


def test_every_heldout_split_is_pinned_disjoint_and_fully_labelled():
    """Each held-out draw pins its trees, the newest ones reuse no other split's repository, and its first-run labels.csv has a
    verdict and a reason on every row (tuners' re-samples, labels_<name>.csv, may leave new rows unjudged; heldout9 is
    pinned for a later draw and has no labels yet)."""
    import json

    mod = _bench_module()
    splits = sorted(p.name for p in mod.DATA.iterdir() if p.name.startswith("heldout") and (p / "sources.json").exists())
    assert {"heldout7", "heldout8", "heldout9"} <= set(splits)
    repos: dict[str, set[str]] = {}
    for split in splits:
        doc = json.loads((mod.DATA / split / "sources.json").read_text())
        assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] for s in doc["sources"]), split
        repos[split] = {s["repo"].lower() for s in doc["sources"]}
    # the draws reserved from heldout7 on share no repository with any other split (heldout6 re-used one of heldout's)
    for split in ("heldout7", "heldout8", "heldout9"):
        assert not repos[split] & set().union(*(r for name, r in repos.items() if name != split)), split
        mod.use_split(split)
        for labels in sorted((mod.DATA / split).glob("labels.csv")):
            mod.LABELS_FILE = labels
            rows = mod.read_labels()
            assert rows and all(r["label"] in ("true", "false") and r["reason"] for r in rows), labels


def test_rescore_counts_false_rows_gone_as_fixed_true_rows_gone_as_lost_and_lists_moved_rows():
    mod = _bench_module()

    def row(line, code, severity, label):
        return {"tree": "app-1", "path": "train.py", "line": str(line), "col": "5", "code": code, "symbol": "cuda",
                "severity": severity, "text": "", "label": label, "reason": "r", "tool_commit": "abc"}

    rows = [row(3, "NPU001", "error", "true"),      # still emitted: kept true
            row(4, "NPU002", "warning", "false"),   # still emitted: kept false
            row(5, "NPU003", "error", "false"),     # gone: a false finding fixed
            row(6, "NPU004", "warning", "true"),    # gone: a true finding lost
            row(7, "NPU005", "error", "false"),     # emitted at info now: moved, keeps its label
            row(8, "NPU006", "info", "")]           # never labelled: not counted
    emitted = {"app-1": [{"path": "train.py", "line": 3, "col": 9, "code": "NPU001", "severity": "error"},
                         {"path": "train.py", "line": 4, "col": 5, "code": "NPU002", "severity": "warning"},
                         {"path": "train.py", "line": 7, "col": 5, "code": "NPU005", "severity": "info"},
                         {"path": "other.py", "line": 6, "col": 5, "code": "NPU004", "severity": "warning"}]}
    r = mod.rescore(rows, emitted)
    assert (r["true"], r["labelled"], r["lost_true"]) == (2, 5, 1)
    assert r["kept"] == {"true": 1, "false": 1}
    assert len(r["gone"]) == 2 and len(r["moved"]) == 1 and r["moved"][0].endswith("-> info")


def test_rescore_matches_a_row_to_the_rule_that_took_its_finding_over():
    """`import flashinfer` labelled under NPU411 (NVIDIA-only packages) is NPU831's (attention-kernel libraries) since
    session 40: the same construct on the same line keeps its label; another rule's finding there does not."""
    mod = _bench_module()
    rows = [{"tree": "app-1", "path": "serve.py", "line": "6", "col": "8", "code": "NPU411", "symbol": "flashinfer",
             "severity": "error", "text": "import flashinfer", "label": "true", "reason": "r", "tool_commit": "abc"},
            {"tree": "app-1", "path": "serve.py", "line": "9", "col": "8", "code": "NPU411", "symbol": "deep_gemm",
             "severity": "error", "text": "import deep_gemm", "label": "true", "reason": "r", "tool_commit": "abc"}]
    emitted = {"app-1": [{"path": "serve.py", "line": 6, "col": 8, "code": "NPU831", "severity": "error"},
                         {"path": "serve.py", "line": 9, "col": 8, "code": "NPU001", "severity": "error"}]}
    r = mod.rescore(rows, emitted)
    assert r["kept"] == {"true": 1} and len(r["gone"]) == 1 and r["lost_true"] == 1


def test_rescore_matches_a_row_drawn_under_a_symlinked_folder_to_the_same_file_under_its_own_path():
    # wetts: examples/aishell-3/vits -> wetts/vits; the draw named the link's path, a later tool the file's own
    mod = _bench_module()
    row = {"tree": "wetts-1", "path": "examples/aishell-3/vits/train.py", "line": "12", "col": "5", "code": "NPU001",
           "symbol": "cuda", "severity": "error", "text": "", "label": "true", "reason": "r", "tool_commit": "abc"}
    emitted = {"wetts-1": [{"path": "wetts/vits/train.py", "line": 12, "col": 5, "code": "NPU001",
                            "severity": "error"}]}
    real = {"examples/aishell-3/vits/train.py": "wetts/vits/train.py"}
    assert mod.rescore([row], emitted)["lost_true"] == 1                         # by path alone: lost
    r = mod.rescore([row], emitted, lambda tree, path: real.get(path, path))
    assert (r["true"], r["lost_true"], r["kept"]["true"]) == (1, 0, 1)
