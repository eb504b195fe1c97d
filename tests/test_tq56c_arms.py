"""tq56c (precision bench, session 56; TUNED on heldout75 trees 1-4): an `if` arm entered only where a device-name
query names another vendor (`if "AMD" in torch.cuda.get_device_name():`) is that backend's code. A positive and a
quiet control on code shaped like verl's Worker."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at


# verl's Worker setup: the ROCm arm, entered only where the device name says AMD; the probe itself stays a finding
WORKER_AMD_ARM = '''
    import os

    import torch


    class Worker:
        def __init__(self, cuda_visible_devices=None) -> None:
            world_size = int(os.getenv("WORLD_SIZE"))
            rank = int(os.getenv("RANK"))
            self._rank = rank
            self._world_size = world_size

            if "AMD" in torch.cuda.get_device_name():
                os.environ["CUDA_VISIBLE_DEVICES"] = os.getenv("ROCR_VISIBLE_DEVICES")
                os.environ["LOCAL_RANK"] = os.getenv("RAY_LOCAL_RANK")
                cuda_visible_devices = os.getenv("LOCAL_RANK", "0")
                torch.cuda.set_device(int(cuda_visible_devices))
'''

WORKER_NVIDIA_ARM = WORKER_AMD_ARM.replace('"AMD" in', '"H100" in')


def test_set_device_in_an_amd_device_name_arm_is_another_backends(tmp_path):
    found = dedented_tree(tmp_path, {"verl/single_controller/base/worker.py": WORKER_AMD_ARM})
    at = severity_at(found, "verl/single_controller/base/worker.py", WORKER_AMD_ARM, "torch.cuda.set_device")
    assert at.get("NPU002") == "info"
    probe = severity_at(found, "verl/single_controller/base/worker.py", WORKER_AMD_ARM, "get_device_name()")
    assert probe.get("NPU002") == "error"


def test_set_device_in_an_nvidia_device_name_arm_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, {"verl/single_controller/base/worker.py": WORKER_NVIDIA_ARM})
    at = severity_at(found, "verl/single_controller/base/worker.py", WORKER_NVIDIA_ARM, "torch.cuda.set_device")
    assert at.get("NPU002") == "error"
