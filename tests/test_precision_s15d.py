"""s15d (issue 11, session 15; TUNED on bench/precision/tuned_s15d, six multi-backend trees: ComfyUI custom nodes
and the DirectML / ZLUDA / ROCm fork of stable-diffusion-webui): false classes of that sample, fixed as families.
Realistic code in the shapes met there; no file is copied."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, rel: str = "modules/shared_init.py") -> list[tuple[int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), rel)
    return [(f.line, f.code, f.severity) for f in result.findings]


def _at(found, line: int, code: str) -> set[str]:
    return {sev for ln, c, sev in found if ln == line and c == code}


ROCM_PROBES = """\
    import sys
    import torch

    IS_ROCM = torch.cuda.is_available() and torch.version.hip is not None
    IS_NVIDIA = torch.cuda.is_available() and torch.version.hip is None


    def initialize():
        if sys.platform == "win32" and torch.cuda.is_available() and torch.version.hip is not None:
            torch.cuda.empty_cache()
        if torch.cuda.is_available() and not torch.version.hip:
            torch.cuda.synchronize()


    def trt_outputs(engine, outputs, trt):
        # TensorRT (NVIDIA): "OUTPUT" holds the letters of "TPU" but names no backend
        if torch.cuda.is_available() and engine.get_tensor_mode("x") == trt.TensorIOMode.OUTPUT:
            torch.cuda.synchronize()
"""


def test_an_and_that_requires_hip_is_rocms_probe():
    found = _found(ROCM_PROBES)
    # the ROCm probes (and the ROCm-only body) are another backend's code: info
    assert _at(found, 4, "NPU002") == {"info"}
    assert _at(found, 9, "NPU002") == {"info"}
    assert _at(found, 10, "NPU002") == {"info"}
    # a probe that asks for CUDA without HIP (`is None`, `not ...hip`) still gates CUDA on Ascend
    assert _at(found, 5, "NPU002") == {"error"}
    assert _at(found, 11, "NPU002") == {"error"}
    assert _at(found, 12, "NPU002") == {"warning"}
    assert _at(found, 17, "NPU002") == {"error"}


OLIVE_UNET = """\
    {
      "input_model": {"type": "PyTorchModel", "config": {"model_path": "runwayml/stable-diffusion-v1-5"}},
      "systems": {
        "local_system": {
          "type": "LocalSystem",
          "config": {
            "accelerators": [
              {
                "device": "gpu",
                "execution_providers": [%s]
              }
            ]
          }
        }
      }
    }
"""


def test_an_olive_gpu_on_directml_is_not_a_cuda_device(tmp_path):
    from static_snippets import findings_in_tree, write_tree

    root = write_tree(tmp_path, {"configs/olive/unet_dml.json": OLIVE_UNET % '"DmlExecutionProvider"',
                                 "configs/olive/unet_b.json": OLIVE_UNET % '"ROCMExecutionProvider"',
                                 "configs/olive/unet_cuda.json": OLIVE_UNET % '"CUDAExecutionProvider"',
                                 "configs/olive/unet_mixed.json":
                                     OLIVE_UNET % '"DmlExecutionProvider", "CUDAExecutionProvider"'})
    found = findings_in_tree(root)
    assert found[("configs/olive/unet_dml.json", 9, "NPU019")] == "info"
    assert found[("configs/olive/unet_b.json", 9, "NPU019")] == "info"
    # a CUDA provider (alone or beside another) keeps the CUDA device
    assert found[("configs/olive/unet_cuda.json", 9, "NPU019")] == "error"
    assert found[("configs/olive/unet_mixed.json", 9, "NPU019")] == "error"
