"""transfer_to_npu reached through the import graph, and NPU700's off values (t11c, tuned on precision heldout4's
MindSpeed-LLM / MindSpeed-MM rows). The trees below are shaped like Ascend-native Megatron ports: a package whose
`__init__` imports (under a backend switch) an adaptor module that loads the shim; entry scripts that import an
external adaptor (`mindspeed.megatron_adaptor`) and a second, FSDP entry that does not; launch scripts with
Megatron flags; debugging switches set off in a launch script."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.runner import run_static
from auditor.static.shim_graph import ShimGraph, _set_value
from tests.static_snippets import write_tree


def _found(run) -> dict[tuple[str, int, str], str]:
    return {(r.path, f.line, f.code): f.severity for r in run.results for f in r.findings}


def _line(root: Path, rel: str, needle: str) -> int:
    return next(i for i, t in enumerate((root / rel).read_text().splitlines(), 1) if needle in t)


# A package that loads the shim from its __init__, through an adaptor chosen by an environment switch.
PACKAGE_TREE = {
    "llmkit/__init__.py": """\
        import os

        backend = os.environ.get("TRAINING_BACKEND", "mcore").lower()
        if backend == "mcore":
            from llmkit.tasks import megatron_adaptor_v2 as megatron_adaptor
        else:
            from llmkit.tasks import megatron_adaptor
        """,
    "llmkit/tasks/__init__.py": "",
    "llmkit/tasks/megatron_adaptor.py": """\
        import torch
        """,
    "llmkit/tasks/megatron_adaptor_v2.py": """\
        import sys
        import torch
        import torch_npu
        from torch_npu.contrib import transfer_to_npu

        from llmkit.features import apply_features


        def exe_adaptation():
            apply_features()
        """,
    "llmkit/features.py": """\
        def apply_features():
            return None
        """,
    "llmkit/core/__init__.py": "",
    "llmkit/core/pipeline/p2p_communication.py": """\
        import torch
        import torch.distributed as dist


        def _communicate_shapes(tensor_send_next, tensor_send_prev, config):
            recv_prev_shape_tensor = torch.empty((3,), device=torch.cuda.current_device(), dtype=torch.int64)
            if tensor_send_next is not None:
                send_next_shape_tensor = torch.tensor(tensor_send_next.size(), device=torch.cuda.current_device())
            torch.cuda.synchronize()
            return recv_prev_shape_tensor
        """,
    "pretrain_gpt.py": """\
        import torch
        from functools import partial
        import llmkit.megatron_adaptor  # noqa: F401
        from llmkit.core.pipeline.p2p_communication import _communicate_shapes


        if __name__ == "__main__":
            torch.cuda.set_device(0)
        """,
    "llmkit/megatron_adaptor.py": """\
        from llmkit.tasks import megatron_adaptor_v2
        """,
    "examples/llama3/pretrain_llama3_8b_ptd.sh": """\
        #!/bin/bash
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        export HCCL_CONNECT_TIMEOUT=1200
        NPUS_PER_NODE=8

        GPT_ARGS="
            --use-flash-attn \\
            --use-fused-rmsnorm \\
            --distributed-backend nccl \\
        "

        torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py $GPT_ARGS
        """,
}


def test_a_package_whose_init_loads_an_adaptor_runs_under_the_shim(tmp_path):
    root = write_tree(tmp_path, PACKAGE_TREE)
    found = _found(run_static([root], jobs=1))
    p2p = "llmkit/core/pipeline/p2p_communication.py"
    line = _line(root, p2p, "recv_prev_shape_tensor = torch.empty")
    assert any(k[0] == p2p and k[1] == line for k in found)
    assert all(sev == "info" for k, sev in found.items() if k[0] == p2p)
    entry = {k[1]: sev for k, sev in found.items() if k[0] == "pretrain_gpt.py"}
    assert entry.get(_line(root, "pretrain_gpt.py", "set_device")) == "info"
    # the launch script starts pretrain_gpt.py, which loads the shim: Megatron's switches select NPU paths
    script = "examples/llama3/pretrain_llama3_8b_ptd.sh"
    lines = {k[1]: sev for k, sev in found.items() if k[0] == script}
    for needle in ("CUDA_DEVICE_MAX_CONNECTIONS", "--use-flash-attn", "--distributed-backend nccl"):
        n = _line(root, script, needle)
        assert lines.get(n) == "info", (needle, lines)


def test_the_same_code_without_the_shim_stays_an_error(tmp_path):
    files = dict(PACKAGE_TREE)
    files["llmkit/tasks/megatron_adaptor_v2.py"] = """\
        import sys
        import torch
        import torch_npu

        from llmkit.features import apply_features


        def exe_adaptation():
            from torch_npu.contrib import transfer_to_npu   # lazy: loaded only when called
            apply_features()
        """
    root = write_tree(tmp_path, files)
    found = _found(run_static([root], jobs=1))
    p2p = "llmkit/core/pipeline/p2p_communication.py"
    assert "error" in {sev for k, sev in found.items() if k[0] == p2p}
    script = "examples/llama3/pretrain_llama3_8b_ptd.sh"
    assert found[(script, _line(root, script, "--distributed-backend nccl"), "NPU122")] == "error"


def test_a_warm_run_follows_a_changed_adaptor(tmp_path):
    root = write_tree(tmp_path / "tree", PACKAGE_TREE)
    cache = tmp_path / "cache"
    p2p = "llmkit/core/pipeline/p2p_communication.py"
    first = _found(run_static([root], jobs=1, cache_dir=cache))
    assert "error" not in {sev for k, sev in first.items() if k[0] == p2p}
    adaptor = root / "llmkit/tasks/megatron_adaptor_v2.py"
    adaptor.write_text(adaptor.read_text().replace("from torch_npu.contrib import transfer_to_npu\n", ""))
    second = _found(run_static([root], jobs=1, cache_dir=cache))
    assert "error" in {sev for k, sev in second.items() if k[0] == p2p}


# Entry scripts that import an external adaptor, beside an FSDP entry that does not.
ENTRY_TREE = {
    "mmkit/__init__.py": "",
    "mmkit/models/__init__.py": "",
    "mmkit/models/gated_delta.py": """\
        import torch


        class GatedDeltaNet(torch.nn.Module):
            def forward(self, x):
                stream = torch.cuda.current_stream()
                return x
        """,
    "mmkit/models/layer_spec.py": """\
        from megatron.core.extensions.transformer_engine import TENorm, TERowParallelLinear
        from megatron.core.tensor_parallel.layers import RowParallelLinear
        from megatron.core.transformer.spec_utils import ModuleSpec


        def get_mlp_spec(use_te=False):
            return ModuleSpec(norm=TENorm, linear_fc2=TERowParallelLinear if use_te else RowParallelLinear)
        """,
    "mmkit/fsdp/__init__.py": "",
    "mmkit/fsdp/swap_optimizer.py": """\
        import torch


        def swap_in(states):
            for k, v in states.items():
                states[k] = v.cuda(non_blocking=True)
        """,
    "mmkit/fsdp/trainer.py": """\
        import argparse
        from mmkit.fsdp.swap_optimizer import swap_in
        from mmkit.utils import log_rank0


        def main():
            parser = argparse.ArgumentParser()
            return parser.parse_args()


        if __name__ == "__main__":
            main()
        """,
    "mmkit/utils.py": """\
        import torch


        def log_rank0(msg):
            if torch.cuda.current_device() == 0:
                print(msg)
        """,
    "pretrain_vlm.py": """\
        import torch
        import mindspeed.megatron_adaptor  # noqa: F401
        from mmkit.models.gated_delta import GatedDeltaNet
        from mmkit.models.layer_spec import get_mlp_spec
        from mmkit.utils import log_rank0


        def model_provider(pre_process=True, post_process=True):
            return GatedDeltaNet()


        if __name__ == "__main__":
            torch.cuda.synchronize()
        """,
    "examples/qwen2vl/finetune_qwen2vl_7b.sh": """\
        #!/bin/bash
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        export ASCEND_LAUNCH_BLOCKING=0
        export ASCEND_GLOBAL_LOG_LEVEL=3
        GPUS_PER_NODE=8
        torchrun --nproc_per_node $GPUS_PER_NODE pretrain_vlm.py --use-flash-attn --distributed-backend nccl
        """,
    "examples/qwen3vl/finetune_qwen3vl_fsdp.sh": """\
        #!/bin/bash
        export NON_MEGATRON=true
        export ASCEND_LAUNCH_BLOCKING=1
        torchrun --nproc_per_node 8 mmkit/fsdp/trainer.py --use-flash-attn
        """,
}


def test_entry_scripts_that_import_an_adaptor_put_what_they_reach_under_the_shim(tmp_path):
    root = write_tree(tmp_path, ENTRY_TREE)
    found = _found(run_static([root], jobs=1))
    model = "mmkit/models/gated_delta.py"
    sev = {k[1]: s for k, s in found.items() if k[0] == model}
    assert sev.get(_line(root, model, "current_stream")) == "info"
    # the Megatron adaptor replaces Transformer Engine classes: the spec's TE names are info there
    spec = "mmkit/models/layer_spec.py"
    assert {s for k, s in found.items() if k[0] == spec and k[2] == "NPU432"} == {"info"}
    # reached only from the FSDP entry, which loads no shim: a real error on Ascend
    opt = "mmkit/fsdp/swap_optimizer.py"
    assert "error" in {sev for k, sev in found.items() if k[0] == opt}
    # reached from both entries: on the FSDP path it runs without the shim
    utils = "mmkit/utils.py"
    assert "error" in {sev for k, sev in found.items() if k[0] == utils}


def test_transformer_engine_stays_without_a_megatron_adaptor(tmp_path):
    files = dict(ENTRY_TREE)
    files["pretrain_vlm.py"] = files["pretrain_vlm.py"].replace("import mindspeed.megatron_adaptor",
                                                                "from torch_npu.contrib import transfer_to_npu")
    root = write_tree(tmp_path, files)
    found = _found(run_static([root], jobs=1))
    spec = "mmkit/models/layer_spec.py"
    assert "error" in {s for k, s in found.items() if k[0] == spec and k[2] == "NPU432"}
    model = "mmkit/models/gated_delta.py"
    assert {s for k, s in found.items() if k[0] == model} == {"info"}


def test_launch_scripts_follow_the_entry_they_start(tmp_path):
    root = write_tree(tmp_path, ENTRY_TREE)
    found = _found(run_static([root], jobs=1))
    megatron = "examples/qwen2vl/finetune_qwen2vl_7b.sh"
    sev = {k[1]: s for k, s in found.items() if k[0] == megatron}
    assert sev[_line(root, megatron, "CUDA_DEVICE_MAX_CONNECTIONS")] == "info"
    assert sev[_line(root, megatron, "torchrun")] == "info"
    # the switches set off are not reported; the one set on is
    assert not any(k[2] == "NPU700" for k in found if k[0] == megatron)
    fsdp = "examples/qwen3vl/finetune_qwen3vl_fsdp.sh"
    assert found[(fsdp, _line(root, fsdp, "ASCEND_LAUNCH_BLOCKING=1"), "NPU700")] == "warning"
    assert found[(fsdp, _line(root, fsdp, "--use-flash-attn"), "NPU363")] == "warning"


def test_graph_ignores_lazy_imports_when_deciding_who_loads_the_shim(tmp_path):
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "from pkg import patch\n",
        "pkg/patch.py": textwrap.dedent("""\
            def get_args():
                from mindspeed.megatron_adaptor import get_mindspeed_args
                return get_mindspeed_args()
            """),
        "pkg/ops.py": "import torch\n",
    })
    files = [(p, str(p.relative_to(root))) for p in root.rglob("*.py")]
    graph = ShimGraph(files)
    assert graph.loads_shim("pkg.ops") is None
    (root / "pkg/patch.py").write_text("import mindspeed.megatron_adaptor\n")
    assert ShimGraph(files).loads_shim("pkg.ops") == "pkg/patch.py"


def test_set_value_reads_shell_python_and_yaml_spellings():
    assert _set_value("export ASCEND_LAUNCH_BLOCKING=0", "ASCEND_LAUNCH_BLOCKING") == "0"
    assert _set_value('os.environ["ASCEND_GLOBAL_LOG_LEVEL"] = "3"', "ASCEND_GLOBAL_LOG_LEVEL") == "3"
    assert _set_value('os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "1")', "ASCEND_GLOBAL_LOG_LEVEL") == "1"
    assert _set_value("  ASCEND_LAUNCH_BLOCKING: 0", "ASCEND_LAUNCH_BLOCKING") == "0"
    assert _set_value("export ASCEND_GLOBAL_LOG_LEVEL=$LOG_LEVEL", "ASCEND_GLOBAL_LOG_LEVEL") is None
    assert _set_value('os.environ["ASCEND_GLOBAL_LOG_LEVEL"] = str(level)', "ASCEND_GLOBAL_LOG_LEVEL") is None


def test_a_launched_name_shared_by_two_entries_needs_its_folder(tmp_path):
    files = dict(ENTRY_TREE)
    files["tools/pretrain_vlm.py"] = """\
        import torch

        if __name__ == "__main__":
            torch.cuda.synchronize()
        """
    files["examples/vlm/run_tools.sh"] = """\
        #!/bin/bash
        torchrun --nproc_per_node 8 pretrain_vlm.py --use-flash-attn
        """
    files["examples/sora/run_root.sh"] = """\
        #!/bin/bash
        python tools/pretrain_vlm.py --use-flash-attn
        """
    root = write_tree(tmp_path, files)
    found = _found(run_static([root], jobs=1))
    # a bare `pretrain_vlm.py` could be either entry: kept
    assert found[("examples/vlm/run_tools.sh", 2, "NPU363")] == "warning"
    # `tools/pretrain_vlm.py` names the entry without the shim: kept
    assert found[("examples/sora/run_root.sh", 2, "NPU363")] == "warning"
