"""tq57c (session 57; TUNED on heldout75): host values (policy (e)). Each shape on code like the trees it came
from, beside a control that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

# verl's older scripts/model_merger.py (copied into RL trees): FSDP shards loaded on the CPU, their device mesh read
# for the layout, the model built on the meta device and materialised on the host, then saved
_MERGER = """
    import argparse

    import torch
    from torch.distributed._tensor import DTensor
    from transformers import AutoConfig, AutoModelForCausalLM

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_dir", required=True, type=str)
        args = parser.parse_args()
        state_dict = torch.load(f"{args.local_dir}/model_world_size_2_rank_0.pt", map_location="cpu")
        weight = state_dict[sorted(state_dict)[0]]
        device_mesh = weight.device_mesh
        mesh_dim_names = device_mesh.mesh_dim_names
        print(f"Got device mesh {device_mesh.mesh}, mesh_dim_names {mesh_dim_names}")
        merged = {k: v._local_tensor.bfloat16() if isinstance(v, DTensor) else v.bfloat16()
                  for k, v in state_dict.items()}
        config = AutoConfig.from_pretrained(f"{args.local_dir}/huggingface")
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
        model.to_empty(device="cpu")
        model.save_pretrained(f"{args.local_dir}/huggingface", state_dict=merged)
"""

# the same merge, materialised on the accelerator to check the weights
_MERGER_ON_DEVICE = _MERGER.replace('to_empty(device="cpu")', 'to_empty(device="cuda")')

# the same merge handing the loaded mesh on: FSDP places the model on the mesh's devices
_MERGER_SHARDED = _MERGER.replace('model.to_empty(device="cpu")', '''model.to_empty(device="cpu")
        model = FSDP(model, device_mesh=device_mesh)''').replace(
    "import argparse", "import argparse\n    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP")


def test_a_merger_on_the_meta_device_and_the_host_is_host_values(tmp_path):
    found = dedented_tree(tmp_path, {"scripts/model_merger.py": _MERGER})
    assert "NPU201" not in severity_at(found, "scripts/model_merger.py", _MERGER, "from_config(config"), found
    assert "NPU201" not in severity_at(found, "scripts/model_merger.py", _MERGER, "merged = {"), found


def test_a_merger_materialised_on_the_device_keeps_its_dtype_hint(tmp_path):
    found = dedented_tree(tmp_path, {"scripts/model_merger.py": _MERGER_ON_DEVICE})
    assert "NPU201" in severity_at(found, "scripts/model_merger.py", _MERGER_ON_DEVICE, "from_config(config"), found


def test_a_mesh_handed_to_fsdp_keeps_its_dtype_hint(tmp_path):
    found = dedented_tree(tmp_path, {"scripts/model_merger.py": _MERGER_SHARDED})
    assert "NPU201" in severity_at(found, "scripts/model_merger.py", _MERGER_SHARDED, "from_config(config"), found
