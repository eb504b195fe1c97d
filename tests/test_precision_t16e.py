"""t16e (issue 11, session 16; TUNED on bench/precision/tuned_t16e: kijai's / cubiq's ComfyUI custom nodes, intel's
OpenVINO GIMP plugins and microsoft's onnxruntime-genai): false classes of that sample, fixed as families. Realistic
code in the shapes met there; no file is copied."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, rel: str = "nodes.py") -> list[tuple[int, int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), rel)
    return [(f.line, f.col, f.code, f.severity) for f in result.findings]


def _at(found, line: int, code: str) -> set[str]:
    return {sev for ln, _, c, sev in found if ln == line and c == code}


# a ComfyUI node: the user's device option picks an entry of a table keyed by the device it builds
DEVICE_TABLE = """\
    import torch


    class DownloadAndLoadSAM2Model:
        @classmethod
        def INPUT_TYPES(s):
            return {"required": {"device": (["cuda", "cpu", "mps"],), "precision": (["fp16", "bf16", "fp32"],)}}

        def loadmodel(self, model, device, precision):
            device = {"cuda": torch.device("cuda"), "cpu": torch.device("cpu"), "mps": torch.device("mps")}[device]
            names = {"cuda": "cuda", "cpu": "cpu"}[device.type]
            return model.to(device), names


    def pick():
        # not a table of option names: the key names another device than the value
        return {"gpu": torch.device("cuda"), "cpu": torch.device("cpu")}["gpu"]
"""


def test_an_entry_of_a_device_option_table_is_info():
    found = _found(DEVICE_TABLE)
    assert _at(found, 10, "NPU003") == {"info"}
    assert _at(found, 11, "NPU003") <= {"info"}
    # `"gpu": torch.device("cuda")` chooses CUDA for the option "gpu": the error stays
    assert _at(found, 17, "NPU003") == {"error"}


# EVA-CLIP's OpenAI loader: `device=None`, filled by a gated conditional, then read inside a lambda
GATED_PARAMETER = """\
    import torch


    def load(name, device=None, jit=True):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        model = torch.jit.load(name, map_location="cpu").eval()
        if not jit:
            return model
        device_holder = torch.jit.trace(lambda: torch.ones([]).to(torch.device(device)), example_inputs=[])
        return model, device_holder


    def load_default(name, device="cuda"):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        return torch.jit.load(name, map_location="cpu").to(torch.device(device))
"""


def test_a_parameter_filled_only_by_a_gated_arm_is_not_reported_at_its_use():
    found = _found(GATED_PARAMETER, "eva_clip/openai.py")
    # the choice is reported where it is made (the arm a warning, the check the error)
    assert _at(found, 6, "NPU003") == {"warning"}
    assert _at(found, 6, "NPU002") == {"error"}
    # its use through the lambda is not the line to port
    assert _at(found, 10, "NPU003") == set()
    # a CUDA default of the parameter is not gated: the default keeps its error; its use is no finding of its own
    # (lead decision 4, session 21)
    assert _at(found, 14, "NPU003") == {"error"}
    assert _at(found, 17, "NPU003") == set()


# onnxruntime-genai's examples/python/common.py: the execution providers a command-line option offers
PROVIDER_CHOICES = """\
    import argparse

    import onnxruntime_genai as og


    def get_parser():
        parser = argparse.ArgumentParser()
        all_eps = [
            "follow_config",
            "cpu",
            "CUDAExecutionProvider",
            "NvTensorRTRTXExecutionProvider",
            "OpenVINOExecutionProvider",
            "QNNExecutionProvider",
            "WebGpuExecutionProvider",
        ]
        parser.add_argument("-e", "--execution_provider", type=str, default="follow_config", choices=all_eps)
        return parser


    def session(path):
        import onnxruntime as ort
        eps = ["CUDAExecutionProvider", "OpenVINOExecutionProvider", "CPUExecutionProvider"]
        return ort.InferenceSession(path, providers=eps)


    def shown(parser):
        names = ["CUDAExecutionProvider", "DmlExecutionProvider", "CPUExecutionProvider"]
        parser.add_argument("--ep", choices=names)
        return names[0]
"""


def test_the_choices_of_an_option_are_a_provider_catalogue():
    found = _found(PROVIDER_CHOICES, "examples/python/common.py")
    assert _at(found, 11, "NPU033") == set()
    # the list a session is given selects the provider
    assert _at(found, 23, "NPU033") == {"warning"}
    # a name read elsewhere than `choices=` is not only the option's choices
    assert _at(found, 28, "NPU033") == {"warning"}


ONNX_ELEMENT_TYPES = """\
    import onnx
    from onnx import TensorProto, helper


    def adapter_inputs(device, vocab_size):
        a = helper.make_tensor_value_info("adapter_a", onnx.TensorProto.FLOAT if device == "cpu"
                                          else onnx.TensorProto.FLOAT16, [vocab_size])
        b = helper.make_tensor_value_info("adapter_b", TensorProto.BFLOAT16, [vocab_size])
        return a, b


    def amp(cfg, AMPMode):
        cfg.amp_mode = AMPMode.FP16
        return cfg
"""


def test_onnx_element_types_are_not_precision_switches():
    found = _found(ONNX_ELEMENT_TYPES, "test/python/test_api.py")
    assert _at(found, 7, "NPU247") == set()
    assert _at(found, 8, "NPU246") == set()
    # an enum member named FP16 on another class still switches fp16 on
    assert _at(found, 13, "NPU247") == {"info"}
