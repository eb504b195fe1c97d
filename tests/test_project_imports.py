"""One import summary per file (auditor/static/project_imports.py): read once in the worker, kept in the cache entry,
used by the transfer_to_npu import graph and the cross-file pass. A warm run with nothing changed reads no file
again; a changed imported module changes its importers' findings on the warm run; a deleted file leaves nothing
stale. Trees: the Ascend-native Megatron port of tests/test_shim_graph.py and the bmtrain-style project of
tests/test_crossfile.py, audited together."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

from auditor.runner import run_static
from auditor.static.project_imports import ProjectImports, _load_time_imports_stack, launched_paths, load_time_imports
from auditor.static.shim_graph import ShimGraph
from tests.test_crossfile import LAYER, NCCL_INIT, OPS, UTILS
from tests.test_shim_graph import PACKAGE_TREE


def _tree(root: Path) -> Path:
    files = {rel: textwrap.dedent(text) for rel, text in PACKAGE_TREE.items()}
    files.update({
        "bmt/__init__.py": "", "bmt/C.py": "", "bmt/global_var.py": "config = {}\n",
        "bmt/nccl/__init__.py": NCCL_INIT, "bmt/nccl/enums.py": "ncclSum = 0\n",
        "bmt/distributed/__init__.py": "", "bmt/distributed/ops.py": OPS,
        "bmt/attn/__init__.py": "", "bmt/attn/utils.py": UTILS, "bmt/attn/layer.py": LAYER,
    })
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _found(run) -> list[tuple[str, int, str, str]]:
    return sorted((r.path, f.line, f.code, f.severity) for r in run.results for f in r.findings)


def _touch_write(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))


P2P = "llmkit/core/pipeline/p2p_communication.py"


def test_a_warm_run_reads_nothing_again_and_gives_the_same_findings(tmp_path):
    root = _tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1)
    fill = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _found(cold) == _found(fill) == _found(warm)
    # both passes did their work: p2p runs under the shim (lowered), ops.py uses the nccl binding (NPU135)
    assert {sev for path, _, _, sev in _found(warm) if path == P2P} == {"info"}
    assert any(path == "bmt/distributed/ops.py" and code == "NPU135" for path, _, code, _ in _found(warm))
    assert cold.project_reads >= 1           # no cache: crossfile places the uses in the importers it reads
    assert warm.cached_files == len(warm.results) and warm.project_reads == 0


def test_a_changed_imported_module_changes_the_importers_on_the_warm_run(tmp_path):
    root = _tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    run_static([root], jobs=1, cache_dir=cache)
    # the adaptor stops loading the shim: p2p (unchanged, from the cache) is an error again
    adaptor = root / "llmkit/tasks/megatron_adaptor_v2.py"
    _touch_write(adaptor, adaptor.read_text().replace("from torch_npu.contrib import transfer_to_npu\n", ""))
    # the nccl binding is ported: ops.py (unchanged) loses its cross-file findings
    _touch_write(root / "bmt/nccl/__init__.py", "import torch.distributed as dist\n\n\n"
                 "def allReduce(src, dst, op, group):\n    dist.all_reduce(src, group=group)\n\n\n"
                 "def send(src, peer, group):\n    dist.send(src, peer, group=group)\n")
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results) - 2
    assert _found(warm) == _found(run_static([root], jobs=1))
    assert "error" in {sev for path, _, _, sev in _found(warm) if path == P2P}
    assert not any(path == "bmt/distributed/ops.py" and code == "NPU135" for path, _, code, _ in _found(warm))


def test_a_deleted_file_leaves_nothing_stale(tmp_path):
    root = _tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    run_static([root], jobs=1, cache_dir=cache)
    (root / "llmkit/tasks/megatron_adaptor_v2.py").unlink()      # the module that loads the shim
    (root / "bmt/nccl/__init__.py").unlink()                      # the CUDA-specific binding
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _found(warm) == _found(run_static([root], jobs=1))
    assert not any(r.path in ("llmkit/tasks/megatron_adaptor_v2.py", "bmt/nccl/__init__.py") for r in warm.results)
    assert "error" in {sev for path, _, _, sev in _found(warm) if path == P2P}
    assert not any(code == "NPU135" for _, _, code, _ in _found(warm))


def test_the_graph_reads_no_file_whose_summary_it_has(tmp_path):
    root = _tree(tmp_path / "tree")
    run = run_static([root], jobs=1)
    files = [(p, p.relative_to(root).as_posix()) for p in sorted(root.rglob("*")) if p.is_file()]
    py = [(p, r) for p, r in files if r.endswith(".py")]
    project = ProjectImports(files, run.results)
    with_summaries = ShimGraph(py, project)
    assert project.reads == 0
    without = ProjectImports(files)          # no summaries: every .py file is read here, as the graph used to
    read_here = ShimGraph(py, without)
    assert without.reads == len(py)
    assert with_summaries.direct == read_here.direct and with_summaries.entries == read_here.entries
    assert with_summaries.under_shim() == read_here.under_shim()


# Spellings the line scan must read as the stack of open blocks does: imports in functions and methods (lazy),
# under module-level `if` / `try` (load time), after a dedent, in a tab-indented file, an `import` line inside a
# docstring after a function (the reference counts it at load time; so does the scan), a continuation line.
TRICKY = '''\
import os
from . import (
    a,
)
try:
    from apex.normalization import FusedRMSNorm
except ImportError:
    FusedRMSNorm = None


def build():
    from pkg.kernels import fused
    if os.environ.get("X"):
        import pkg.lazy_two as two
    return fused


class Model:
    def forward(self):
        from .ops import attn
        return attn

    x = 1
if True:
\timport pkg.tabbed
def f():
\tpass
NOTE = """
    import pkg.in_docstring
"""
async def g():
    import pkg.async_lazy


from pkg import late, other as alias, *
'''


def test_the_line_scan_equals_the_block_stack():
    got = load_time_imports(TRICKY)
    assert got == _load_time_imports_stack(TRICKY)
    lazy = {module for module, _, load in got if not load}
    assert lazy == {"pkg.kernels", "pkg.lazy_two", ".ops", "pkg.async_lazy"}
    assert ("pkg.tabbed", [], True) in got and ("pkg.in_docstring", [], True) in got
    assert ("pkg", ["late", "other", "*"], True) in got


def test_launched_paths_keep_literal_folders():
    script = "#!/bin/bash\n# python old.py\nbasepath=$(cd `dirname $0`; pwd)\n" \
             "torchrun $DISTRIBUTED_ARGS $basepath/tools/pretrain_gpt.py \\\n    --use-flash-attn\n" \
             "python ./train.py --config x.yaml\n"
    assert launched_paths(script) == [[["tools"], "pretrain_gpt.py"], [[], "train.py"]]


def test_launched_paths_read_the_script_on_a_continuation_line():
    # GraphGPT's tune scripts (heldout65): the launcher on one line, the program on the next
    script = "wandb offline\n" \
             "python -m torch.distributed.run --nnodes=1 --nproc_per_node=4 --master_port=20001 \\\n" \
             "    graphgpt/train/train_mem.py \\\n    --model_name_or_path ${model_path} \\\n    --bf16 True\n" \
             "deepspeed --num_gpus 8 \\\n  ${ROOT}/train/sft.py --deepspeed ds.json\n"
    assert launched_paths(script) == [[["graphgpt", "train"], "train_mem.py"], [["train"], "sft.py"]]
    # a comment line is not continued: the next line is a command of its own, with no launcher
    assert launched_paths("# torchrun \\\nscripts/prep.py --x\n") == []
    # a comment inside a continued command ends it (review51 item 14): train_v1.py is commented out, and train.py
    # on the next line is a command of its own with no launcher word
    assert launched_paths("torchrun --nproc_per_node 8 \\\n    # tools/train_v1.py \\\n    tools/train.py --cfg a.yaml\n") == []
    # an argument file named on a later line of a launch is a launch word as on one line (as before)
    assert launched_paths("torchrun \\\n  tools/train.py \\\n  configs/retina.py\n") == \
        [[["tools"], "train.py"], [["configs"], "retina.py"]]


FUSED = '''\
import torch
import cutlass.cute as cute


@cute.kernel
def entropy_kernel(logits: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = logits[tidx]
'''
GUARDED_IMPORTER = '''\
import torch

try:
    from .fused_entropy import entropy_kernel
    FUSED_KERNEL_AVAILABLE = True
except ImportError:
    FUSED_KERNEL_AVAILABLE = False
'''


def test_guarded_imports_are_kept_in_the_importers_summary_and_redone_when_it_changes(tmp_path):
    root = tmp_path / "tree"
    for rel, text in {"roll/__init__.py": "", "roll/fused_entropy.py": FUSED,
                      "roll/tensor_parallel.py": GUARDED_IMPORTER}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    cache = tmp_path / "cache"

    def kernel_severities(run) -> set[str]:
        return {sev for path, _, code, sev in _found(run) if path == "roll/fused_entropy.py" and code != "NPU001"}

    cold = run_static([root], jobs=1)
    fill = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert kernel_severities(cold) and "error" not in kernel_severities(cold)     # the fallback runs on Ascend
    assert _found(cold) == _found(fill) == _found(warm)
    assert fill.project_reads == 1 and warm.project_reads == 0   # the importer read once, its answer kept
    _touch_write(root / "roll/tensor_parallel.py", "from .fused_entropy import entropy_kernel\n")
    changed = run_static([root], jobs=1, cache_dir=cache)
    assert "error" in kernel_severities(changed) and _found(changed) == _found(run_static([root], jobs=1))
