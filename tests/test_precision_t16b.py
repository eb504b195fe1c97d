"""t16b (issue 11, session 16; TUNED on heldout19 and heldout18 after their blind runs): a device section of a config
on the CPU, constants that name dtype names, device defaults nothing reads, CUDA checks that refuse a CUDA-only
library, ONNX Runtime's CUDA provider as a gate, CPU-named device constants in tests, host-side checkpoint converters
(auditor/project/configs.py, auditor/static/visitor.py, host_scopes.py, gates.py, neutral_uses.py). The code below is
written afresh in the shapes met there (llm-on-ray's fine-tuning configs and dtype constants, a diffusers-style
attention block and pipeline, roop's face enhancer, a DeepSeek fp8 checkpoint converter); each fix has a control that
keeps the finding."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.test_rules_apex import audit

ENGINE = StaticEngine(load_rules())


def _sev(by_line: dict, line: int, code: str) -> list[str]:
    return [f.severity for f in by_line.get(line, []) if f.code == code]


FINETUNE_CONFIG = b"""\
General:
  base_model: EleutherAI/gpt-j-6b
  output_dir: /tmp/llm-ray/output
Training:
  optimizer: adamw_torch
  batch_size: 2
  mixed_precision: bf16
  device: cpu
  num_training_workers: 2
  Evaluation:
    precision: bf16
    device: gpu
Inference:
  precision: bf16
  device: cuda
"""


def test_a_section_whose_own_device_is_the_cpu_chooses_no_npu_dtype():
    found = ENGINE.analyze_bytes(FINETUNE_CONFIG, "finetune/models/gpt-j-6b.yaml").findings
    precision = {f.line for f in found if f.category == "precision"}
    assert 7 not in precision                   # Training.mixed_precision beside Training.device: cpu
    assert {11, 14} <= precision                # a subsection on the GPU, a sibling section on CUDA
    # the whole document on the CPU (p15a's case) still drops every dtype
    top = b"name: gemma-2b\ndevice: cpu\nvllm:\n  enabled: true\n  precision: bf16\n"
    assert not [f for f in ENGINE.analyze_bytes(top, "models/gemma-2b.yaml").findings if f.category == "precision"]


DTYPE_NAME_CONSTANTS = """\
import torch
from llm_on_ray.inference.inference_config import PRECISION_FP32, Precision

PRECISION_BF16 = "bf16"
PRECISION_FP16 = "fp16"
DEFAULT_PRECISION = "bf16"
FP16 = "bfloat16"


def decide_torch_dtype(conf):
    if conf.torch_dtype == PRECISION_BF16:
        conf.torch_dtype = torch.bfloat16
    elif conf.torch_dtype == PRECISION_FP32:
        conf.torch_dtype = torch.float32
    if conf.precision == Precision.FP16:
        return torch.float16
    if conf.precision == ENABLED:
        return torch.bfloat16
    dtype = torch.bfloat16 if conf.ipex.precision == PRECISION_BF16 else torch.float32
    return dtype
"""


def test_constants_that_name_dtype_names_choose_nothing_but_a_default_does():
    found = audit(DTYPE_NAME_CONSTANTS)
    assert not _sev(found, 4, "NPU201") and not _sev(found, 5, "NPU202")     # the name's own constant
    assert _sev(found, 6, "NPU201") == ["info"]         # a default precision: a choice
    assert _sev(found, 7, "NPU201") == ["info"]         # a name that does not spell its value
    assert not _sev(found, 12, "NPU201")                # a configured name converted (policy (a))
    assert not _sev(found, 16, "NPU202")                # an enum member named for the dtype
    assert _sev(found, 18, "NPU201") == ["info"]        # a flag that names no dtype: a choice
    assert not _sev(found, 19, "NPU201")                # the IfExp form of the conversion


PIPELINE = """\
import torch


class VideoPipeline(DiffusionPipeline):
    def __init__(self, vae=None, transformer=None, device: torch.device = torch.device("cuda")):
        super().__init__()
        self.register_modules(vae=vae, transformer=transformer)


def encode(prompt, device: str = "cuda"):
    return tokenizer(prompt).to(device)
"""


def test_a_device_default_the_function_never_reads_is_info():
    found = audit(PIPELINE)
    unread = [f for f in found.get(5, []) if f.code == "NPU003"]
    assert unread and all(f.severity == "info" and f.data.get("context") == "unread-default" for f in unread)
    assert _sev(found, 10, "NPU003") == ["error"]       # a default the body reads


XFORMERS_GUARD = """\
import torch
from diffusers.utils import is_xformers_available

if is_xformers_available():
    import xformers


class Attention:
    def set_use_memory_efficient_attention_xformers(self, use_memory_efficient_attention_xformers):
        if use_memory_efficient_attention_xformers:
            if not is_xformers_available():
                raise ModuleNotFoundError("Refer to https://github.com/facebookresearch/xformers", name="xformers")
            elif not torch.cuda.is_available():
                raise ValueError(
                    "torch.cuda.is_available() should be True but is False. xformers' memory efficient attention is"
                    " only available for GPU "
                )


def main():
    if not torch.cuda.is_available():
        raise RuntimeError("this script needs a GPU")
"""


def test_a_cuda_check_that_refuses_a_cuda_only_library_is_info():
    found = audit(XFORMERS_GUARD)
    refusal = [f for f in found.get(13, []) if f.code == "NPU002"]
    assert refusal and all(f.severity == "info" and f.data.get("context") == "library-refusal" for f in refusal)
    assert _sev(found, 21, "NPU002") == ["error"]       # a script that refuses to run without CUDA


PROVIDER_GATE = """\
import roop.globals


def get_device() -> str:
    if 'CUDAExecutionProvider' in roop.globals.execution_providers:
        return 'cuda'
    if 'CoreMLExecutionProvider' in roop.globals.execution_providers:
        return 'mps'
    return 'cpu'


def pick(args) -> str:
    if args.fast:
        return 'cuda'
    return 'cpu'
"""


def test_onnx_runtimes_cuda_provider_gates_the_code_behind_it():
    found = audit(PROVIDER_GATE, "roop/processors/frame/face_enhancer.py")
    assert _sev(found, 6, "NPU003") == ["warning"]
    assert _sev(found, 14, "NPU003") == ["error"]       # behind a test that CUDA does not decide


CPU_TEST = """\
import torch
from llm_on_ray.inference.inference_config import DEVICE_CPU, DEVICE_HPU
from llm_on_ray.inference.utils import decide_torch_dtype


def test_decide_torch_dtype_with_hf_config_torch_dtype(mock_infer_conf):
    mock_infer_conf.device = DEVICE_CPU
    hf_config = {"torch_dtype": torch.bfloat16}
    decide_torch_dtype(mock_infer_conf, hf_config)


def test_decide_torch_dtype_hpu(mock_infer_conf):
    mock_infer_conf.device = DEVICE_HPU
    hf_config = {"torch_dtype": torch.bfloat16}
    decide_torch_dtype(mock_infer_conf, hf_config)
"""


def test_a_test_on_a_cpu_named_device_constant_holds_host_values():
    found = audit(CPU_TEST, "tests/inference/test_utils.py")
    assert not _sev(found, 8, "NPU201")
    assert _sev(found, 14, "NPU201") == ["info"]        # the HPU test places its work


CONVERTER = """\
import torch
from safetensors import safe_open
from safetensors.torch import save_file


def convert_files(paths):
    for path in paths:
        tensors = {}
        with safe_open(path, framework="pt", device="cpu") as f:
            for k in f.keys():
                tensors[k] = (f.get_tensor(k).float() * 0.5).to(torch.float8_e4m3fn)
        save_file(tensors, path + ".fp8")
"""


def test_a_host_checkpoint_converter_has_no_dtype_findings_but_one_on_a_device_keeps_them():
    assert not [f for fs in audit(CONVERTER, "scripts/convert.py").values() for f in fs if f.category == "precision"]
    on_device = CONVERTER.replace('device="cpu"', 'device="cuda"')
    assert [f for fs in audit(on_device, "scripts/convert.py").values() for f in fs if f.category == "precision"]
