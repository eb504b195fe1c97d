"""t14t (issue 14, tuned on static test14): the families test14 left, on code written for these tests in the shapes
real code bases use (a GPU-presence check before choosing an inference backend, an OCR model that picks its attention
backend, a LoRA server's config and CLI, a diffusion pipeline loading its text encoder in 8 bits, a device helper, a
deformable-conv package that builds CPU and CUDA extensions and says where the prebuilt one came from), with the lines
each must find and the lines it must leave alone."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import categories_at as _categories, codes_at as _codes, finding_keys_by_line

ENGINE = StaticEngine(load_rules())


def _findings(code: str, rel: str = "pkg/mod.py") -> dict[int, set[tuple[str, str, str]]]:
    return finding_keys_by_line(ENGINE, code, rel)


BACKEND_PICKER = '''\
import os
import shutil
import subprocess


def gpu_present() -> bool:
    # the NVIDIA device node /dev/nvidia0 only exists with a GPU and its driver
    if os.path.exists("/dev/nvidia0"):
        return True
    if os.path.isfile("/proc/driver/nvidia/version"):
        return True
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    result = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=15)
    return result.returncode == 0


def pick_backend() -> str:
    print("no /dev/nvidia0 found, using the llama.cpp backend")
    return "vllm" if gpu_present() else "llamacpp"
'''


def test_nvidia_device_node_probes_are_device_findings_and_messages_are_not():
    found = _findings(BACKEND_PICKER)
    assert "NPU049" in _codes(found, 8)          # os.path.exists("/dev/nvidia0")
    assert "NPU049" in _codes(found, 10)         # os.path.isfile("/proc/driver/nvidia/version")
    assert ("NPU049", "device", "error") in found[8]
    assert "NPU049" not in _codes(found, 7)      # the comment
    assert "NPU049" not in _codes(found, 20)     # a message


ATTENTION_PICKER = '''\
from typing import Optional

from transformers import PreTrainedModel
from transformers.utils import is_flash_attn_2_available


class RecognitionPreTrainedModel(PreTrainedModel):
    def _check_and_adjust_attn_implementation(self, attn_implementation: Optional[str], **kwargs):
        if attn_implementation is None:
            try:
                self._sdpa_can_dispatch(True)
                attn_implementation = "sdpa"
            except (ValueError, ImportError):
                attn_implementation = "eager"
            if self._supports_flash_attn and is_flash_attn_2_available():
                attn_implementation = "flash_attention_2"
        return attn_implementation


def load(path, args):
    model = RecognitionPreTrainedModel.from_pretrained(path, attn_implementation="eager")
    other = RecognitionPreTrainedModel.from_pretrained(path, attn_implementation=args.attn_implementation)
    if other.config._attn_implementation == "sdpa":
        return other
    return model
'''


def test_attention_backend_probes_and_choice():
    found = _findings(ATTENTION_PICKER)
    # the import of transformers' flash-attn probe is not a finding (the lead dropped t14t's import entry: it
    # warned on import lines of Ascend-native trees); the probe's call is (line 15)
    assert "attention" not in _categories(found, 4)
    assert "NPU804" in _codes(found, 11)          # self._sdpa_can_dispatch(True)
    # a literal attn_implementation = "sdpa" is not reported (tp12: the literal-"sdpa" matches it read were mostly
    # false: SDPA is the portable choice), only transformers' backend probes are
    assert "NPU804" not in _codes(found, 12)
    assert "NPU391" in _codes(found, 15)          # the probe called
    assert "attention" in _categories(found, 16)  # "flash_attention_2" (NPU386)
    assert not _codes(found, 14) & {"NPU804", "NPU386"}     # "eager"
    assert "NPU804" not in _codes(found, 21)      # attn_implementation="eager"
    assert "NPU804" not in _codes(found, 22)      # the choice read from the arguments
    assert "NPU804" not in _codes(found, 23)      # a comparison reads the choice


LORA_CONFIG = '''\
import argparse
from dataclasses import dataclass
from typing import List


@dataclass
class ServerConfig:
    enable_adapters: bool = False
    adapter_max_rank: int = 16
    adapter_use_triton_kernels: bool = True
    use_triton_sampler: bool = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    group = parser.add_argument_group("adapters")
    group.add_argument(
        "--adapter-use-triton-kernels",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Use Triton kernels for adapter matmuls",
    )
    group.add_argument("--use-triton-sampler", action="store_true", help="Triton sampling kernels")
    return parser
'''


def test_triton_switches_defaulting_on_are_kernel_findings():
    found = _findings(LORA_CONFIG)
    assert ("NPU803", "kernel", "warning") in found[10]   # adapter_use_triton_kernels: bool = True
    assert "NPU803" in _codes(found, 18)                  # the option defaulting on, on its name
    assert "NPU803" not in _codes(found, 11)              # defaults off
    assert "NPU803" not in _codes(found, 23)              # store_true: the user's switch


TEXT_ENCODER = '''\
import torch
from transformers import T5EncoderModel


def load_text_encoder(cache_dir, quantize: bool):
    if quantize:
        return T5EncoderModel.from_pretrained(
            "DeepFloyd/IF-I-L-v1.0",
            subfolder="text_encoder",
            load_in_8bit=True,
            variant="8bit",
            device_map="auto",
            cache_dir=cache_dir,
        )
    return T5EncoderModel.from_pretrained("DeepFloyd/IF-I-L-v1.0", subfolder="text_encoder",
                                          load_in_8bit=False, torch_dtype=torch.float16)
'''


def test_bitsandbytes_loading_keyword_alone_is_not_a_finding():
    # t14t's NPU424 (`load_in_8bit=True` anywhere) was dropped: tp12 read 21 of its findings on the precision trees
    # and 1 was right (ipex-llm's own INT4 loader takes the same keyword); the keyword alone does not say bitsandbytes
    found = _findings(TEXT_ENCODER)
    assert not any("NPU424" in _codes(found, line) for line in found)


DEVICE_HELPER = '''\
import torch


def move_to_device(model, bf16: bool = True, cuda: bool = True):
    if bf16:
        model = model.to(torch.bfloat16)
    return model


def keep_on_host(model, cuda: bool = False):
    return model
'''


def test_one_line_two_categories():
    found = _findings(DEVICE_HELPER)
    # a parameter named `cuda` is not NPU038 (the lead dropped t14t's `cuda` keyword: it fired on values such as
    # `cuda=cuda_rng`); the bf16 default on the same line still is
    assert "precision" in _categories(found, 4) and "NPU038" not in _codes(found, 4)
    assert "NPU038" not in _codes(found, 10)


DCN_SETUP = '''\
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension
from torch.utils.cpp_extension import CppExtension
from torch.utils.cpp_extension import CUDAExtension

modules = [CppExtension("dcn_cpu", ["src/dcn_cpu.cpp"])]
if torch.cuda.is_available():
    modules.append(CUDAExtension("dcn_cuda", ["src/dcn_cuda.cpp", "src/dcn_cuda_kernel.cu"]))

setup(name="dcn", ext_modules=modules, cmdclass={"build_ext": BuildExtension})
'''


def test_cpp_extension_import_is_an_info_kernel_finding():
    found = _findings(DCN_SETUP, "dcn/setup.py")
    assert ("NPU371", "kernel", "info") in found[4]
    assert "NPU370" in _codes(found, 5)


DCN_LOADER = '''\
import os
import warnings

import torch
from torch.utils import cpp_extension

dcn_dir = os.path.dirname(os.path.dirname(__file__))
if torch.cuda.is_available():
    try:
        from .. import dcn_cuda
        warnings.warn("Using precompiled dcn_cuda from {}".format(dcn_cuda.__file__))
    except ImportError:
        dcn_cuda = cpp_extension.load(
            name="dcn_cuda",
            sources=[os.path.join(dcn_dir, "src", "dcn_cuda.cpp"), os.path.join(dcn_dir, "src", "dcn_cuda_kernel.cu")])


def dcn_forward(x, offset, weight):
    out = x.new_empty(x.shape)
    dcn_cuda.dcn_forward(x, offset, weight, out)
    return out
'''


def test_a_message_naming_where_an_extension_lives_is_not_a_use():
    found = _findings(DCN_LOADER, "dcn/functions/dcn.py")
    assert not found.get(11)                     # the message: `dcn_cuda.__file__` runs nothing of the module
    assert "kernel" in _categories(found, 10)    # the import of the prebuilt copy
    assert "kernel" in _categories(found, 20)    # a call into it


OPTIONAL_TCNN = '''\
tcnn = None
try:
    import tinycudann

    tcnn = tinycudann
    del tinycudann
    TCNN_EXISTS = True
except ModuleNotFoundError:
    TCNN_EXISTS = False


def encoder(n_dims):
    return tcnn.Encoding(n_dims, {"otype": "HashGrid"})
'''


def test_unbinding_a_name_is_not_a_use():
    found = _findings(OPTIONAL_TCNN)
    assert "third_party" in _categories(found, 3)     # the import
    assert "third_party" in _categories(found, 5)     # the alias made of it
    assert not found.get(6)                           # del tinycudann
