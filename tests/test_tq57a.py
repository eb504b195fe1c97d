"""tq57a (session 57; TUNED on heldout76): setup.py builds whose default is the CPU `CppExtension` and whose CUDA
extension replaces it only under a CUDA test. Each shape on code like the trees it came from, beside a control that
keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

# maskrcnn-benchmark's setup.py (copied into many detection trees): CPU by default, CUDA only when CUDA is there
_DEFAULT_CPU_SETUP = '''
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    here = os.path.dirname(os.path.abspath(__file__))
    csrc = os.path.join(here, "detlib", "csrc")
    sources = glob.glob(os.path.join(csrc, "*.cpp")) + glob.glob(os.path.join(csrc, "cpu", "*.cpp"))
    extension = CppExtension
    extra_compile_args = {"cxx": []}
    define_macros = []

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += glob.glob(os.path.join(csrc, "cuda", "*.cu"))
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = ["-DCUDA_HAS_FP16=1", "-D__CUDA_NO_HALF_OPERATORS__"]

    return [extension("detlib._C", sources, define_macros=define_macros, extra_compile_args=extra_compile_args)]


setup(name="detlib", packages=find_packages(), ext_modules=get_extensions(),
      cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension})
'''

# the same build whose test holds on a host without CUDA too: the CUDA arm is what Ascend builds
_OPT_OUT_SETUP = _DEFAULT_CPU_SETUP.replace(
    '(torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1"',
    'os.getenv("NO_CUDA", "0") != "1"')


def test_default_cpu_extensions_cuda_test_and_arm_are_info(tmp_path):
    found = dedented_tree(tmp_path, {"setup.py": _DEFAULT_CPU_SETUP, "detlib/__init__.py": ""})
    test = severity_at(found, "setup.py", _DEFAULT_CPU_SETUP, "FORCE_CUDA")
    assert test and set(test.values()) == {"info"}, test
    arm = severity_at(found, "setup.py", _DEFAULT_CPU_SETUP, "extension = CUDAExtension")
    assert arm and set(arm.values()) == {"info"}, arm


def test_cuda_arm_taken_without_cuda_keeps_its_findings(tmp_path):
    found = dedented_tree(tmp_path, {"setup.py": _OPT_OUT_SETUP, "detlib/__init__.py": ""})
    arm = severity_at(found, "setup.py", _OPT_OUT_SETUP, "extension = CUDAExtension")
    assert "error" in arm.values(), arm


def test_cuda_probe_reads_the_test_as_a_host_without_cuda_would():
    import ast

    from auditor.static.cpu_bindings import default_cpu_choices
    for test, off in (('torch.cuda.is_available()', True), ('CUDA_HOME is not None', True),
                      ('"FORCE_CUDA" in os.environ', True), ('os.environ.get("FORCE_CUDA")', True),
                      ('torch.cuda.is_available() or args.cuda', False), ('not torch.cuda.is_available()', False),
                      ('os.getenv("WITH_CUDA", "1") == "1"', False)):
        src = f"ext = CppExtension\nif {test}:\n    ext = CUDAExtension\n"
        spans, tests = default_cpu_choices(ast.parse(src))
        assert bool(spans) is off and (tests == [2]) is off, test


# maskrcnn-benchmark's csrc: `cuda/` beside `cpu/`, where only some ops have a CPU member
_ROI_ALIGN_CU = '''
#include <ATen/ATen.h>
#include <THC/THC.h>

template <typename T>
__global__ void RoIAlignForward(const int nthreads, const T* bottom_data, T* top_data) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index < nthreads) top_data[index] = bottom_data[index];
}

at::Tensor ROIAlign_forward_cuda(const at::Tensor& input) {
  auto output = at::empty_like(input);
  RoIAlignForward<float><<<1, 256>>>(input.numel(), input.data_ptr<float>(), output.data_ptr<float>());
  return output;
}
'''
_DEFORM_KERNEL_CU = _ROI_ALIGN_CU.replace("RoIAlignForward", "deformable_im2col_gpu_kernel").replace(
    "ROIAlign_forward_cuda", "deformable_im2col")
_ROI_ALIGN_CPU = '''
#include "cpu/vision.h"

at::Tensor ROIAlign_forward_cpu(const at::Tensor& input) { return input.clone(); }
'''


def _csrc(tmp_path):
    return dedented_tree(tmp_path, {"detlib/csrc/cuda/ROIAlign_cuda.cu": _ROI_ALIGN_CU,
                                    "detlib/csrc/cuda/deform_conv_kernel_cuda.cu": _DEFORM_KERNEL_CU,
                                    "detlib/csrc/cpu/ROIAlign_cpu.cpp": _ROI_ALIGN_CPU,
                                    "detlib/csrc/cpu/vision.h": "#pragma once\n#include <torch/extension.h>\n"})


def test_cuda_source_with_a_cpu_member_is_one_member_of_the_set(tmp_path):
    found = _csrc(tmp_path)
    kernel = {c: s for (rel, _), codes in found.items() if rel.endswith("ROIAlign_cuda.cu") for c, s in codes.items()}
    assert kernel.get("NPU372") == "info", kernel


def test_cuda_source_the_cpu_folder_has_no_member_of_keeps_its_error(tmp_path):
    found = _csrc(tmp_path)
    kernel = {c: s for (rel, _), codes in found.items() if rel.endswith("deform_conv_kernel_cuda.cu")
              for c, s in codes.items()}
    assert kernel.get("NPU372") == "error", kernel


# a copied model wrapper (MetaICL-like) whose training methods the tree's evaluation scripts never call
_WRAPPER = '''
import torch


class ICLModel(object):
    def __init__(self, fp16=True):
        self.fp16 = fp16
        self.model = None

    def setup_optimizer(self, params, optimization="8bit-adam"):
        if optimization == "8bit-adam":
            import bitsandbytes as bnb
            self.optimizer = bnb.optim.Adam8bit(params, lr=1e-5)
        if self.fp16:
            self.model, self.optimizer = setup_fp16(self.model, self.optimizer)

    def do_inference(self, batch):
        with torch.no_grad():
            return self.model(batch.cuda())


def setup_fp16(model, optimizer):
    from apex import amp
    return amp.initialize(model, optimizer, opt_level="O1")
'''
_EVAL = '''
from icl.model import ICLModel

model = ICLModel()
print(model.do_inference(None))
'''


_MODEL = "evaluation/ICL/icl/model.py"


def test_methods_of_a_plain_class_nothing_calls_are_info(tmp_path):
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": _EVAL.replace("from icl", "from ICL.icl")})
    bnb = severity_at(found, _MODEL, _WRAPPER, "import bitsandbytes")
    assert bnb and set(bnb.values()) == {"info"}, bnb
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.initialize")
    assert amp and set(amp.values()) == {"info"}, amp


def test_methods_a_script_calls_keep_their_findings(tmp_path):
    run = _EVAL.replace("from icl", "from ICL.icl") + "model.setup_optimizer([])\n"
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": run})
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.initialize")
    assert "error" in amp.values(), amp


def test_methods_of_a_library_subclass_keep_their_findings(tmp_path):
    module = _WRAPPER.replace("class ICLModel(object):", "class ICLModel(torch.nn.Module):")
    found = dedented_tree(tmp_path, {_MODEL: module, "evaluation/run_eval.py": _EVAL.replace("from icl", "from ICL.icl")})
    amp = severity_at(found, _MODEL, module, "amp.initialize")
    assert "error" in amp.values(), amp


def test_a_top_level_packages_methods_keep_their_findings(tmp_path):
    found = dedented_tree(tmp_path, {"icl/__init__.py": "", "icl/model.py": _WRAPPER, "run_eval.py": _EVAL})
    amp = severity_at(found, "icl/model.py", _WRAPPER, "amp.initialize")
    assert "error" in amp.values(), amp


# PEFT's load_adapter (copied into many LoRA trees): the adapter file lands on CUDA when there is one, else the host
_LOAD_ADAPTER = '''
import os

import torch
from safetensors.torch import load_file as safe_load_file


def load_adapter(model, model_id, adapter_name="default"):
    filename = os.path.join(model_id, "adapter_model.safetensors")
    adapters_weights = safe_load_file(filename, device="cuda" if torch.cuda.is_available() else "cpu")
    model.load_state_dict(adapters_weights, strict=False)
    return model
'''


def test_probe_that_only_picks_a_safetensors_loads_device_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"lora/peft_model.py": _LOAD_ADAPTER})
    line = severity_at(found, "lora/peft_model.py", _LOAD_ADAPTER, "safe_load_file(filename")
    assert line.get("NPU002") == "info", line


def test_probe_that_picks_a_torch_loads_device_keeps_its_finding(tmp_path):
    src = _LOAD_ADAPTER.replace('safe_load_file(filename, device="cuda"', 'torch.load(filename, map_location="cuda"')
    found = dedented_tree(tmp_path, {"lora/peft_model.py": src})
    line = severity_at(found, "lora/peft_model.py", src, "torch.load(filename")
    assert line.get("NPU002") not in (None, "info"), line


def test_methods_of_a_class_no_other_file_uses_keep_their_findings(tmp_path):
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": "print('nothing')\n"})
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.initialize")
    assert "error" in amp.values(), amp
