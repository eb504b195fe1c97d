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


# -- Triton facts -----------------------------------------------------------------------------------------------

# a Triton-Ascend port laid out like MindSpeed's ops/triton/ (t11f): a helper module whose autotune configs are
# Triton-Ascend ones, a kernel that imports it, a kernel made on NPU tensors, a CUDA kernel beside them, a test
TRITON_TREE = {
    "kern/__init__.py": "",
    "kern/ops/__init__.py": "",
    "kern/ops/triton/__init__.py": "",
    "kern/ops/triton/utils.py": """\
        import triton


        def get_autotune_config(multibuffer_list=(True, False), block_list=(64, 128)):
            return [
                triton.Config({"BLOCK": b}, multibuffer=m, enable_hivm_auto_cv_balance=True)
                for m in multibuffer_list for b in block_list
            ]
        """,
    "kern/ops/chunk.py": """\
        import torch
        import triton
        import triton.language as tl

        from kern.ops.triton.utils import get_autotune_config


        @triton.autotune(configs=get_autotune_config(block_list=(64,)), key=["T"])
        @triton.jit
        def chunk_fwd_kernel(x_ptr, y_ptr, T, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


        def chunk_fwd(x: torch.Tensor) -> torch.Tensor:
            y = torch.empty_like(x)
            chunk_fwd_kernel[(1,)](x, y, x.numel())
            return y
        """,
    "kern/ops/rms_norm.py": """\
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def rms_norm_kernel(x_ptr, w_ptr, y_ptr, N: tl.constexpr, eps):
            offs = tl.arange(0, N)
            x = tl.load(x_ptr + offs)
            tl.store(y_ptr + offs, x * tl.rsqrt(tl.sum(x * x) / N + eps) * tl.load(w_ptr + offs))


        def rms_norm(x, w, eps=1e-6):
            y = torch.empty(x.shape, device="npu")
            rms_norm_kernel[(1,)](x, w, y, x.shape[-1], eps)
            return y
        """,
    "kern/ops/softmax_cuda.py": """\
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def softmax_kernel(x_ptr, y_ptr, N: tl.constexpr):
            offs = tl.arange(0, N)
            x = tl.load(x_ptr + offs)
            e = tl.exp(x - tl.max(x, 0))
            tl.store(y_ptr + offs, e / tl.sum(e, 0))


        def softmax(x):
            y = torch.empty(x.shape, device="cuda")
            softmax_kernel[(1,)](x, y, x.shape[-1])
            return y
        """,
    "tests/test_chunk.py": """\
        import torch

        from kern.ops.chunk import chunk_fwd, chunk_fwd_kernel


        def test_chunk():
            x = torch.ones(128)
            y = torch.empty_like(x)
            chunk_fwd_kernel[(1,)](x, y, 128)
            assert torch.equal(chunk_fwd(x), y)
        """,
}


def _reference_triton_ascend_files(results, files) -> dict[str, str]:
    """backends.triton_ascend_files as it was before the facts (it read every .py file of the tree): the answer the
    fact-based pass must keep."""
    from auditor.discover import MAX_FILE_BYTES, SourceError, read_source
    from auditor.static.backends import _ASCEND_TRITON, _IMPORT_FROM, _TRITON_IMPORT, _module_of

    wanted = {r.path for r in results if r.path.endswith(".py") and any(
        f.name == "triton-kernel" and f.severity != "error" and not f.data.get("context") for f in r.findings)}
    texts, marked = {}, {}
    for path, rel in files:
        if not rel.endswith(".py"):
            continue
        try:
            data = read_source(path, MAX_FILE_BYTES)[0][:400_000]
        except (OSError, SourceError):
            continue
        if rel in wanted:
            texts[rel] = data
        if b"triton" in data and _TRITON_IMPORT.search(data) and _ASCEND_TRITON.search(data):
            marked[_module_of(rel) or rel] = rel
    out = {}
    for rel, data in texts.items():
        if _ASCEND_TRITON.search(data):
            out[rel] = "its kernels run on NPU tensors or Triton-Ascend configs"
            continue
        for m in _IMPORT_FROM.finditer(data):
            mod = (m.group(1) or m.group(2)).decode("ascii", "replace")
            if mod in marked and marked[mod] != rel:
                out[rel] = f"it uses the Triton-Ascend module {marked[mod]}"
                break
    return out


def _per_file_results(root: Path):
    """Each file's own result (findings and summary as the worker leaves them, before the tree passes)."""
    from auditor.static.engine import StaticEngine

    engine = StaticEngine(load_rules())
    files = [(path, path.relative_to(root).as_posix()) for path in sorted(root.rglob("*.py"))]
    return files, [engine.analyze_path(path, rel) for path, rel in files]


def test_triton_ascend_files_reads_the_facts_not_the_files(tmp_path):
    from auditor.static.backends import triton_ascend_files
    from auditor.static.project_imports import TRITON, ProjectImports
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path, TRITON_TREE)
    files, results = _per_file_results(root)
    facts = {r.path: r.summary[TRITON] for r in results}
    assert facts["kern/ops/triton/utils.py"] == {"import": True, "ascend": True, "modules": ["triton"]}
    assert facts["kern/ops/rms_norm.py"]["ascend"] and "ascend" not in facts["kern/ops/softmax_cuda.py"]
    assert "kern.ops.triton.utils" in facts["kern/ops/chunk.py"]["modules"]
    assert facts["kern/__init__.py"] == {}                         # no Triton: nothing written

    expected = _reference_triton_ascend_files(results, files)
    assert expected == {
        "kern/ops/triton/utils.py": "its kernels run on NPU tensors or Triton-Ascend configs",
        "kern/ops/chunk.py": "it uses the Triton-Ascend module kern/ops/triton/utils.py",
        "kern/ops/rms_norm.py": "its kernels run on NPU tensors or Triton-Ascend configs",
    }
    project = ProjectImports(files, results)
    assert triton_ascend_files(results, files, project) == expected and project.reads == 0
    # a caller without summaries: each Python file read once this run, the same answer
    bare = ProjectImports(files)
    assert triton_ascend_files(results, files, bare) == expected and bare.reads == len(files)
    assert triton_ascend_files(results, files, bare) == expected and bare.reads == len(files)


def test_a_kernel_file_whose_facts_lack_its_imports_is_read_again(tmp_path):
    from auditor.static.backends import triton_ascend_files
    from auditor.static.project_imports import TRITON, ProjectImports
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path, TRITON_TREE)
    files, results = _per_file_results(root)
    chunk = next(r for r in results if r.path == "kern/ops/chunk.py")
    del chunk.summary[TRITON]["modules"]          # facts written for a file without Triton findings
    project = ProjectImports(files, results)
    assert triton_ascend_files(results, files, project) == _reference_triton_ascend_files(results, files)
    assert project.reads == 1


def test_a_file_over_the_default_limit_is_skipped_as_the_pass_always_did(tmp_path):
    from auditor.discover import MAX_FILE_BYTES
    from auditor.static.backends import triton_facts

    big = b"import triton\nx = torch.ones(1, device='npu')\n" + b"#" * MAX_FILE_BYTES
    assert triton_facts(big, True) == {"skip": True}
    late = b"import triton\n" + b"#" * 400_000 + b"\nx = torch.ones(1, device='npu')\n"
    assert triton_facts(late, False) == {"import": True}          # markers past 400,000 bytes were never read


@pytest.mark.parametrize("text", [
    'y = torch.empty(n, device="npu")', "y = torch.empty(n, device = 'npu:1')", 'x.to("npu:0")',
    "import torch_npu", "from torch_npu.contrib import transfer_to_npu", "    import torch_npu",
    "triton.Config({}, multibuffer=True)", "set_workspace_multibuffer=False", "enable_hivm_auto_cv_balance=True",
    "tile_mix_vector_loop=2", "tile_mix_cube_loop=4",
    'y = torch.empty(n, device="cuda")', "def npu_input(x): return x", "torch_npu_available = False",
    "# device='npu' only in a comment", 'name = "npu_kernel"',
])
def test_the_cheap_word_test_never_changes_the_marker_answer(text):
    from auditor.static.backends import _ASCEND_TRITON, ascend_triton_text

    for data in (text.encode(), b"import triton\n\n" + text.encode() + b"\n"):
        assert ascend_triton_text(data) == (_ASCEND_TRITON.search(data) is not None)


def test_warm_run_equals_cold_run_on_the_triton_tree(tmp_path):
    from auditor.static.project_imports import TRITON
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path / "tree", TRITON_TREE)
    cache = tmp_path / "cache"

    def findings(run):
        return sorted((r.path, f.line, f.code, f.severity, f.message) for r in run.results for f in r.findings)

    cold = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results) and warm.project_reads == 0
    assert findings(warm) == findings(cold) == findings(run_static([root], jobs=1))
    assert all(TRITON in r.summary for r in warm.results if r.path.endswith(".py"))
    lowered = {(p, s) for p, _l, c, s, m in findings(cold) if c == "NPU373" and "Triton-Ascend already" in m}
    assert ("kern/ops/chunk.py", "info") in lowered and ("kern/ops/rms_norm.py", "info") in lowered
    assert not any(p == "kern/ops/softmax_cuda.py" for p, _s in lowered)


SHELL_TREE = {
    "pkg/__init__.py": "",
    "pkg/train_main.py": "import torch\n",
    "tools/eval.py": "import torch\n",
    "scripts/train.sh": "#!/bin/bash\n# python -m old.entry (a comment: runs nothing)\n"
                        "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 -m pkg.train_main --cfg base.yaml\n",
    "scripts/run_all.bash": "#!/bin/bash\nbash scripts/train.sh\npython tools/eval.py --ckpt out/\n",
    "pack/finetune_lora.sh": "deepspeed --num_gpus 8 pack/ft.py --lora\n",
}


def test_shell_scripts_are_read_once_by_the_worker_not_again_by_the_reach_pass(tmp_path):
    """h44: the reach pass (unreached_defs) takes a script's `-m` modules, launch lines and the script names it
    mentions from the facts the worker keeps (`shell_facts`), so a run with summaries reads no `.sh` script again;
    a `.bash` script, which the import graph does not read, is read once per question, as before."""
    from auditor.static.engine import StaticEngine
    from auditor.static.project_imports import ProjectImports, shell_facts
    from auditor.static.unreached_defs import _shell_launches, _unrun_launchers
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path, SHELL_TREE)
    facts = shell_facts((root / "scripts/train.sh").read_bytes())
    assert facts["modules"] == ["pkg.train_main"] and facts["trains"] and facts["scripts"] == []
    assert shell_facts((root / "scripts/run_all.bash").read_bytes())["scripts"] == ["train.sh"]

    engine = StaticEngine(load_rules())
    files = [(path, path.relative_to(root).as_posix()) for path in sorted(root.rglob("*")) if path.is_file()]
    results = [engine.analyze_path(path, rel) for path, rel in files]
    project = ProjectImports(files, results)
    assert _shell_launches(project) == {"pkg/train_main", "pkg/train_main/__main__", "tools/eval", "pack/ft"}
    assert project.reads == 1                                        # run_all.bash only
    # train.sh is named by run_all.bash; finetune_lora.sh, a deepspeed launcher, by nothing
    assert _unrun_launchers(project, {}) == {"pack/finetune_lora.sh"}
    bare = ProjectImports(files)                                     # no summaries: every script read
    assert _shell_launches(bare) == _shell_launches(project) and bare.reads == 3
