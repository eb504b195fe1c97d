"""npu-audit: find what must change when CUDA PyTorch code moves to Huawei Ascend NPUs."""

__version__ = "0.1.0"
TOOL_NAME = "npu-audit"
