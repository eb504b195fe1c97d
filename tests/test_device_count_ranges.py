"""A loop from a constant start up to the CUDA device count (pd56, session 32; heldout35's ComfyUI_ExtraModels
T5/nodes.py and HunYuanDiT/nodes.py: `for k in range(1, torch.cuda.device_count()): devices.append(f"cuda:{k}")`)
runs no step on Ascend, where the count is 0: its body is code behind a CUDA gate (warning), as pd50's
`range(torch.cuda.device_count())`. A loop over a fixed range keeps its error."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

NODES = """\
    import folder_paths
    import torch


    class T5v11Loader:
        @classmethod
        def INPUT_TYPES(s):
            devices = ["auto", "cpu", "gpu"]
            # hack for using second GPU as offload
            for k in range(1, torch.cuda.device_count()):
                devices.append(f"cuda:{k}")
            return {"required": {"t5v11_name": (folder_paths.get_filename_list("t5"),), "device": (devices,)}}


    class FixedLoader:
        @classmethod
        def INPUT_TYPES(s):
            devices = ["auto", "cpu"]
            for i in range(0, 2):
                devices.append(f"cuda:{i}")
            return {"required": {"device": (devices,)}}
"""


def test_loop_from_one_to_the_cuda_count_is_a_warning(tmp_path):
    root = write_tree(tmp_path / "pack", {"T5/nodes.py": NODES})
    found = severities_at(root, "T5/nodes.py", NODES, 'devices.append(f"cuda:{k}")')
    assert ("warning", "cuda-available-branch") in found and not any(s == "error" for s, _ in found)


def test_loop_over_a_fixed_range_keeps_its_error(tmp_path):
    root = write_tree(tmp_path / "pack", {"T5/nodes.py": NODES})
    assert ("error", "") in severities_at(root, "T5/nodes.py", NODES, 'devices.append(f"cuda:{i}")')
