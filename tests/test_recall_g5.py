"""g5 (session 35, issue 14): CUDA-only parts of multi-backend packages (NPU464 / NPU466, a module path segment below
the top level: `mmcv.tensorrt`, `tensorflow.python.compiler.tensorrt`, `fastchat.modules.exllama`, a package's `VLLM`
class) and CUDA-only engines chosen by a setting's name (NPU465 / NPU467: `torch.compile(backend="tensorrt")`,
`precision="transformer-engine"`, `{"backend": "trt-llm"}`, `judge_backend = "vllm"`). Real shapes from the public
corpora, with the nearest controls: a relative import, the tree's own package, a guarded import, a CPU / Ascend arm of
the same dispatch, comparisons, messages and comments."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at, findings_in_tree, line_of, write_tree

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# mmcv 1.x's TensorRT deployment (Video-Swin-Transformer / RepViT tools/deployment/test_trt.py shape), beside the
# ONNX Runtime arm of the same script
DEPLOY = b"""import argparse

import onnxruntime as ort
from mmcv.tensorrt import TRTWraper, is_tensorrt_plugin_loaded, onnx2trt

# mmcv.tensorrt needs TensorRT; see the docs
def run(args):
    if args.backend == "tensorrt":
        assert is_tensorrt_plugin_loaded(), "TensorRT plugin is not loaded"
        model = TRTWraper(args.trt_file, ["input"], ["probs"])
    else:
        model = ort.InferenceSession(args.onnx_file, providers=["CPUExecutionProvider"])
    print("backend: tensorrt via mmcv.tensorrt")
    return model
"""


def test_mmcv_tensorrt_import_and_uses_are_found_and_the_ort_arm_and_messages_are_not():
    found = _found(DEPLOY, "tools/deployment/test_trt.py")
    assert ("NPU464", "error") in found[line_of(DEPLOY, "from mmcv.tensorrt import")]
    assert "NPU464" in codes_at(found, line_of(DEPLOY, "model = TRTWraper("))
    assert "NPU464" in codes_at(found, line_of(DEPLOY, "assert is_tensorrt_plugin_loaded()"))
    for quiet in ("# mmcv.tensorrt needs", "providers=[\"CPUExecutionProvider\"]", "print(\"backend: tensorrt",
                  "if args.backend == \"tensorrt\""):
        assert not codes_at(found, line_of(DEPLOY, quiet)) & {"NPU464", "NPU465"}, quiet


# FastChat's model loader and lm-format-enforcer's ExLlamaV2 filter; TensorFlow's TF-TRT converter (MegaDetector)
PARTS = b"""from fastchat.modules.exllama import ExllamaConfig
from fastchat.modules.gptq import GptqConfig
from lmformatenforcer.integrations.exllamav2 import ExLlamaV2TokenEnforcerFilter
from tensorflow.python.compiler.tensorrt import trt_convert as trt
from mmcv.ops import nms
from mmdet.apis import init_detector

converter = trt.TrtGraphConverterV2(input_saved_model_dir="saved_model")
"""


def test_cuda_only_segments_below_the_top_level_are_found_and_other_parts_are_not():
    found = _found(PARTS)
    for needle in ("fastchat.modules.exllama", "integrations.exllamav2", "compiler.tensorrt",
                   "converter = trt.TrtGraphConverterV2"):
        assert ("NPU464", "error") in found[line_of(PARTS, needle)], needle
    for needle in ("fastchat.modules.gptq", "from mmcv.ops import", "from mmdet.apis"):
        assert "NPU464" not in codes_at(found, line_of(PARTS, needle)), needle


def test_a_relative_import_of_the_projects_own_trt_module_is_not_a_dependency():
    src = b"from .trt import build_engine\nfrom ..tensorrt.utils import load_engine\nengine = build_engine(onnx_path)\n"
    found = _found(src, "deploy/export.py")
    assert not any(code in {"NPU464", "NPU466"} for codes in found.values() for code, _ in codes)


def test_the_trees_own_package_named_through_a_cuda_segment_is_first_party(tmp_path: Path):
    root = write_tree(tmp_path, {
        "mydeploy/__init__.py": "",
        "mydeploy/tensorrt/__init__.py": "",
        "mydeploy/tensorrt/wrapper.py": "class TRTModule:\n    pass\n",
        "tools/run.py": "from mydeploy.tensorrt.wrapper import TRTModule\nm = TRTModule()\n",
        "tools/other.py": "from mmcv.tensorrt import TRTWraper\n",
    })
    found = findings_in_tree(root)
    assert not any(code == "NPU464" and path == "tools/run.py" for path, _, code in found)
    assert found.get(("tools/other.py", 1, "NPU464")) == "error"


def test_a_guarded_import_with_a_fallback_is_a_warning():
    src = (b"try:\n    from mmcv.tensorrt import TRTWraper\nexcept ImportError:\n    TRTWraper = None\n"
           b"\n\ndef build(path):\n    if TRTWraper is None:\n        return load_onnx(path)\n    return TRTWraper(path)\n")
    found = _found(src)
    assert found[2] & {("NPU464", "warning")} and ("NPU464", "error") not in found[2]


# langchain / distilabel / lmms-eval engine classes named VLLM; a vLLM server's OpenAI client is not an engine
ENGINES = b"""from langchain_community.llms import VLLM
from distilabel.llms import vLLM
from lmms_eval.models.simple.vllm import VLLM as VLLMSimple
from langchain_community.llms.vllm import VLLMOpenAI
from langchain_community.llms import HuggingFacePipeline

llm = VLLM(model=model_path, trust_remote_code=True, max_new_tokens=512)
client = VLLMOpenAI(openai_api_base="http://localhost:8000/v1")
"""


def test_a_packages_vllm_engine_class_is_found_and_a_server_client_is_not():
    found = _found(ENGINES)
    assert ("NPU466", "warning") in found[1]
    for needle in ("import vLLM", "VLLM as VLLMSimple", "llm = VLLM("):
        assert ("NPU466", "warning") in found[line_of(ENGINES, needle)], needle
    for needle in ("import VLLMOpenAI", "client = VLLMOpenAI", "HuggingFacePipeline"):
        assert "NPU466" not in codes_at(found, line_of(ENGINES, needle)), needle


# engines chosen by a setting's name: keyword arguments, dict entries built in code, defaults
CHOICES = b"""import torch
import lightning as L
from dataclasses import dataclass


@dataclass
class JudgeArgs:
    judge_backend: str = "vllm"
    lighteval_backend: str = "accelerate"


def build(model, source, execution_backend="nvrtc"):
    fast = torch.compile(model, backend="tensorrt")
    slow = torch.compile(model, backend="inductor", mode="max-autotune-no-cudagraphs")
    trainer = L.Trainer(accelerator="gpu", precision="transformer-engine")
    npu_trainer = L.Trainer(accelerator="npu", precision="bf16-mixed")
    serve = {"backend": "trt-llm", "max_batch_size": 8}
    local = {"engine": "hf", "device": "npu"}
    gptq = {"quant_type": "exllama", "bits": 4}
    if execution_backend == "nvrtc":
        raise ValueError("execution_backend='nvrtc' needs CUDA")
    # torch.compile(model, backend="tensorrt")
    return fast, slow, trainer, npu_trainer, serve, local, gptq
"""


def test_engine_choices_by_setting_name_are_found_and_other_values_comparisons_and_messages_are_not():
    found = _found(CHOICES, "train.py")
    assert ("NPU467", "warning") in found[line_of(CHOICES, 'judge_backend: str = "vllm"')]
    for needle in ('execution_backend="nvrtc"', 'fast = torch.compile', 'precision="transformer-engine"',
                   '"backend": "trt-llm"', '"quant_type": "exllama"'):
        assert ("NPU465", "error") in found[line_of(CHOICES, needle)], needle
    for needle in ('lighteval_backend: str', 'backend="inductor"', 'precision="bf16-mixed"', '"engine": "hf"',
                   'if execution_backend == "nvrtc"', "raise ValueError", '# torch.compile(model, backend="tensorrt")'):
        assert not codes_at(found, line_of(CHOICES, needle)) & {"NPU465", "NPU467"}, needle


def test_a_segment_under_a_name_another_rule_reports_adds_no_third_party_finding():
    src = b"import torch\n\ntorch.backends.cudnn.benchmark = True\nv = torch.backends.cudnn.version()\n"
    found = _found(src)
    assert not any(code == "NPU464" for codes in found.values() for code, _ in codes)
    assert found[3] and found[4]


def test_a_class_member_named_for_the_technology_is_not_a_module_path():
    # infinity's utils_optimum.py: `Device.tensorrt`, an enum value compared to pick the ONNX Runtime provider
    src = (b"from infinity_emb.primitives import Device\n\n\ndef provider(device):\n"
           b"    if device == Device.tensorrt:\n        return \"TensorrtExecutionProvider\"\n")
    found = _found(src)
    assert not any(code == "NPU464" for codes in found.values() for code, _ in codes)
