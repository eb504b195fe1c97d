"""t27b (session 27): test42 / test43's kernel misses (vLLM-derived setup.py files, kaolin's cudart swap, torch-ngp's
cuda_ray switch), the message line flagged in RVT's setup.py and the false-positive families found by reading every
unlabelled flagged line of both splits. Each case has a control that must stay quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "setup.py") -> list[tuple[int, str, str]]:
    return sorted((f.line, f.code, f.category) for f in ENGINE.analyze_bytes(src, path).findings)


def _lines(src: bytes, code: str, path: str = "setup.py") -> list[int]:
    return sorted({line for line, c, _ in _found(src, path) if c == code})


# vLLM's setup.py as ReaLHF and fms-extras copied it: the arch list, nvcc's version probe, the flags taken out of
# torch's own nvcc list, and the ROCm branch
VLLM_SETUP = b"""import contextlib
import os
import subprocess
from typing import Set

import setuptools
import torch
import torch.utils.cpp_extension as torch_cpp_ext
from packaging.version import Version, parse
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, BuildExtension, CUDAExtension

# Supported NVIDIA GPU architectures.
NVIDIA_SUPPORTED_ARCHS = {"7.0", "7.5", "8.0", "8.6", "8.9", "9.0"}
ROCM_SUPPORTED_ARCHS = {"gfx90a", "gfx942"}
NVCC_FLAGS = ["-O3", "-std=c++17"]


def _is_hip() -> bool:
    return torch.version.hip is not None


def get_nvcc_cuda_version(cuda_dir: str) -> Version:
    nvcc_output = subprocess.check_output(
        [cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True
    )
    output = nvcc_output.split()
    return parse(output[output.index("release") + 1].split(",")[0])


if _is_hip():
    NVCC_FLAGS += ["-DUSE_ROCM"]
else:
    nvcc_cuda_version = get_nvcc_cuda_version(CUDA_HOME)
    NVCC_FLAGS += torch_cpp_ext.COMMON_NVCC_FLAGS
    REMOVE_NVCC_FLAGS = [
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
    ]
    for flag in REMOVE_NVCC_FLAGS:
        with contextlib.suppress(ValueError):
            torch_cpp_ext.COMMON_NVCC_FLAGS.remove(flag)
"""


def test_nvidia_arch_list_is_a_kernel_build_setting():
    assert _lines(VLLM_SETUP, "NPU356") == [13]     # not ROCm's gfx list (line 14)


def test_arch_list_needs_compute_capabilities():
    src = b'SUPPORTED_ARCHS = {"x86": ("i386", "x86_64"), "power": ("ppc64",)}\n' \
          b'FA2_SUPPORTED_ARCHS = {"Ampere", "Ada Lovelace", "Hopper"}\n' \
          b'SUPPORTED_ARCHS = {"8.0", "8.6", "8.9", "9.0+PTX"}\n' \
          b'cuda_archs = torch.cuda.get_gencode_flags()\n'
    assert _lines(src, "NPU356", "build.py") == [3]


def test_nvcc_version_probe_in_a_build_script_stays_an_nvidia_tool():
    # labels disagree (six earlier splits: third_party, test42: kernel); the tool keeps the earlier reading
    found = [f for f in _found(VLLM_SETUP) if f[0] == 24]
    assert found == [(24, "NPU407", "third_party")]


def test_nvcc_outside_a_build_script_stays_an_nvidia_tool():
    src = b'import subprocess\n\nout = subprocess.check_output(["nvcc", "-V"], universal_newlines=True)\n'
    assert [(line, code) for line, code, _ in _found(src, "collect_env.py")] == [(3, "NPU407")]


def test_flag_removed_by_name_from_torch_nvcc_list():
    assert 41 in _lines(VLLM_SETUP, "NPU369")


def test_rocm_flag_edit_is_not_an_nvcc_flag():
    lines = _lines(VLLM_SETUP, "NPU369")
    assert 31 not in lines and 34 in lines       # `+= ["-DUSE_ROCM"]` under _is_hip(); the CUDA branch's edit stays


def test_flag_list_edit_by_a_name_needs_a_flag_list():
    src = b"names = []\nfor n in ['a', 'b']:\n    names.append(n)\n    names.remove(n)\n"
    assert _lines(src, "NPU369", "util.py") == []


# kaolin's setup.py template (kaolin, point-e, RVT's point-renderer): the extension links the static CUDA runtime
KAOLIN_SETUP = b"""import os
from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


def get_extensions():
    extra_compile_args = {'cxx': ['-O3']}
    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        extension = CUDAExtension
    else:
        assert(False, "CUDA is not available. Set FORCE_CUDA=1 for Docker builds")
    extensions = [extension(name='point_renderer._C', sources=['a.cpp'], extra_compile_args=extra_compile_args)]
    for ext in extensions:
        ext.libraries = ['cudart_static' if x == 'cudart' else x
                         for x in ext.libraries]
    return extensions
"""


def test_cuda_runtime_swap_in_a_build_script_is_kernel():
    assert {(code, cat) for line, code, cat in _found(KAOLIN_SETUP) if line == 15} == {("NPU353", "kernel")}


def test_cuda_runtime_loaded_outside_a_build_stays_device():
    src = b'import ctypes\n\n_libcudart = ctypes.CDLL(ctypes.util.find_library("cudart"))\n'
    assert {cat for line, _, cat in _found(src, "cuda_limits.py") if line == 3} == {"device"}


def test_parenthesised_assert_message_is_text():
    assert [f for f in _found(KAOLIN_SETUP) if f[0] == 12] == []
    assert _lines(KAOLIN_SETUP, "NPU021") == [9]   # the test reads the variable


def test_exit_message_is_text():
    src = b'import sys\n\nif not ok:\n    sys.exit("CUDA is not available. Set FORCE_CUDA=1 for Docker builds")\n' \
          b'os.environ["FORCE_CUDA"] = "1"\n'
    assert _lines(src, "NPU021", "build.py") == [5]


# torch-ngp's ray-marching switch as latent-nerf / stable-dreamfusion carry it
RENDER_CONFIG = b"""from dataclasses import dataclass


@dataclass
class RenderConfig:
    \"\"\" Parameters for the NeRF Renderer \"\"\"
    # Whether to use CUDA raymarching
    cuda_ray: bool = True
    # Maximal number of steps sampled per ray with cuda_ray
    max_steps: int = 1024


class NeRFRenderer:
    def __init__(self, cfg):
        self.cuda_ray = cfg.cuda_ray
        if self.cuda_ray:
            self.density_bitfield = None
"""


def test_cuda_ray_on_by_default_is_a_kernel_switch():
    assert _lines(RENDER_CONFIG, "NPU893", "render_config.py") == [8]


def test_cuda_ray_store_true_and_off_default_stay_quiet():
    src = b"import argparse\n\nparser = argparse.ArgumentParser()\n" \
          b"parser.add_argument('--cuda_ray', action='store_true', help='use CUDA raymarching instead of pytorch')\n" \
          b"opt = parser.parse_args()\n"
    assert _lines(src, "NPU893", "main.py") == []
    assert _lines(RENDER_CONFIG.replace(b"bool = True", b"bool = False"), "NPU893", "render_config.py") == []


# cliport's docker launcher: a command built from adjacent literals, one per line
DOCKER_RUN = b"""def main(args):
    cmd = "docker run -it --rm "
    if not args.headless:
        cmd += " --env DISPLAY=unix$DISPLAY"\\
               " --env XAUTHORITY"\\
               " --env NVIDIA_DRIVER_CAPABILITIES=all"\\
               " --volume /tmp/.X11-unix:/tmp/.X11-unix:rw"
    return cmd
"""


def test_finding_in_a_concatenation_is_on_the_part_that_names_it():
    assert _lines(DOCKER_RUN, "NPU004", "docker_run.py") == [6]


# Fantasia3D's sd.py: a scheduler and a tokenizer given a dtype (no weights: no effect), the pipeline's is the choice
SD_LOAD = b"""import torch
from diffusers import DPMSolverMultistepScheduler, StableDiffusionPipeline
from transformers import CLIPTokenizer


def load(model_key):
    scheduler = DPMSolverMultistepScheduler.from_pretrained(model_key, subfolder="scheduler", torch_dtype=torch.float16)
    tokenizer = CLIPTokenizer.from_pretrained(model_key, subfolder="tokenizer", torch_dtype=torch.float16)
    pipe = StableDiffusionPipeline.from_pretrained(model_key, torch_dtype=torch.float16)
    return scheduler, tokenizer, pipe
"""


def test_dtype_of_a_weightless_loader_is_not_a_precision_choice():
    assert _lines(SD_LOAD, "NPU202", "sd.py") == [9]


# ReaLHF's setup.py: the CUDA sources a build compiles, and the same globs shipped as package data
PACKAGE_DATA_SETUP = b"""import setuptools
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ext = CUDAExtension(
    name="realhf._C.cugae",
    sources=[
        "csrc/cugae/gae.cu",
    ],
)
setuptools.setup(
    name="realhf",
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExtension},
    package_data={
        "": [
            "csrc/**/*.cu",
            "csrc/**/*.cuh",
        ],
    },
)
"""


def test_package_data_globs_are_not_build_sources():
    assert _lines(PACKAGE_DATA_SETUP, "NPU383") == [7]
