"""tk39 (session 39; TUNED on test84, test85): a code base's own `cuda_*` compiled modules imported from a package
named like an extension (QJL's `from qjl_kernel import cuda_qjl_quant`, NPU837), a TensorRT plugin library loaded by
a path that is no literal (FastFlowNet's `ctypes.CDLL(open(...).read())`, NPU811), and the families below. Each
family with its nearest negatives."""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from static_snippets import write_tree

# one set of snippet helpers with tk38 (the same readers of findings by line and of a tree audit)
from tests.test_tk38 import _at, _codes, _line, _tree_findings


# QJL qjl_kernel/qjl_kernel.py (trimmed): qjl_kernel/setup.py builds CUDAExtension(name='cuda_qjl_quant') in place
QJL_KERNEL = '''
import torch
from qjl_kernel import cuda_qjl_quant
from qjl_kernel import cuda_qjl_score


def qjl_quant(key_states, outlier_indices, rand_prj, outlier_sketch_dim):
    if key_states.dtype == torch.half and rand_prj.dtype == torch.half:
        return cuda_qjl_quant.qjl_quant_half_half(
            key_states, outlier_indices, rand_prj, outlier_sketch_dim)
    raise TypeError("Unsupported data types for QJL quantization")


def qjl_score(key_quant, key_norm, outlier_indices, query_sketch, query_states, rand_prj):
    return cuda_qjl_score.qjl_score_cuda_half_half(
        key_quant, key_norm, outlier_indices, query_sketch, query_states, rand_prj)
'''

QJL_SETUP = '''
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='combined_cuda_extensions',
    ext_modules=[
        CUDAExtension(name='cuda_qjl_score', sources=['csrc/qjl_score_kernel.cu']),
        CUDAExtension(name='cuda_qjl_quant', sources=['csrc/qjl_quant_kernel.cu']),
    ],
    cmdclass={'build_ext': BuildExtension},
)
'''


def test_cuda_prefixed_module_of_an_extension_package_is_a_compiled_extension():
    codes = _codes(QJL_KERNEL, "qjl_kernel/qjl_kernel.py")
    for needle in ("import cuda_qjl_quant", "import cuda_qjl_score", "cuda_qjl_quant.qjl_quant_half_half(",
                   "cuda_qjl_score.qjl_score_cuda_half_half("):
        assert _at(codes, _line(QJL_KERNEL, needle), "NPU837"), needle


def test_cuda_prefixed_python_helpers_stay_quiet():
    # pixelsplat's src/model/decoder/cuda_splatting.py and curobo's cuda_graph_util are Python modules
    src = '''
    from src.model.decoder.cuda_splatting import render_cuda
    from curobo._src.util import cuda_graph_util

    def render(extrinsics, intrinsics, gaussians, fn):
        executor = cuda_graph_util.create_graph_executor(fn)
        return render_cuda(extrinsics, intrinsics, gaussians)
    '''
    assert not any(c[1] == "NPU837" for c in _codes(src, "decoder.py"))


def test_cuda_prefixed_module_in_a_tree(tmp_path):
    write_tree(tmp_path, {"qjl_kernel/qjl_kernel.py": QJL_KERNEL, "qjl_kernel/setup.py": QJL_SETUP,
                          "qjl_kernel/__init__.py": ""})
    found = _tree_findings(tmp_path)
    kernel = next(v for k, v in found.items() if k.endswith("qjl_kernel/qjl_kernel.py"))
    line = _line(QJL_KERNEL, "cuda_qjl_quant.qjl_quant_half_half(")
    assert any(c[0] == line and c[1] in ("NPU837", "NPU320") for c in kernel)


def test_tree_drops_a_cuda_prefixed_python_module(tmp_path):
    # the same import where the package holds a Python module of that name: the tree's own helper
    write_tree(tmp_path, {"qjl_kernel/qjl_kernel.py": QJL_KERNEL, "qjl_kernel/__init__.py": "",
                          "qjl_kernel/cuda_qjl_quant.py": "def qjl_quant_half_half(*a):\n    return a\n",
                          "qjl_kernel/cuda_qjl_score.py": "def qjl_score_cuda_half_half(*a):\n    return a\n"})
    found = _tree_findings(tmp_path)
    kernel = next(v for k, v in found.items() if k.endswith("qjl_kernel/qjl_kernel.py"))
    assert not any(c[1] == "NPU837" for c in kernel)


# FastFlowNet tensorrt_workspace/infr.py (trimmed)
FASTFLOWNET_INFR = '''
import os
import ctypes

import tensorrt as trt

ctypes.CDLL(open(os.path.join(os.path.dirname(__file__),'tensorrt_plugin_path')).read())

if __name__ == '__main__':
    logger = trt.Logger(trt.Logger.VERBOSE)
    trt.init_libnvinfer_plugins(logger, '')
'''


def test_tensorrt_plugin_library_by_a_path_read_at_run_time():
    codes = _codes(FASTFLOWNET_INFR, "infr.py")
    assert _at(codes, _line(FASTFLOWNET_INFR, "ctypes.CDLL("), "NPU811")
    src = '''
    import ctypes

    import tensorrt as trt

    def load_plugins(so_file):
        ctypes.CDLL(so_file)
    '''
    assert _at(_codes(src, "inference.py"), _line(src, "ctypes.CDLL("), "NPU811")


def test_library_found_by_system_name_or_without_tensorrt_is_no_plugin():
    src = '''
    import ctypes
    import ctypes.util

    import tensorrt as trt

    cudart = ctypes.CDLL(ctypes.util.find_library("cudart"))
    '''
    assert not any(c[1] == "NPU811" for c in _codes(src, "trt_utils.py"))
    src = '''
    import ctypes

    def load(lib_path):
        return ctypes.CDLL(lib_path)
    '''
    assert not any(c[1] == "NPU811" for c in _codes(src, "native.py"))


# NeuS2 / instant-ngp (trimmed): the CMake build makes `pyngp` a pybind11 extension of a SHARED library with CUDA on
NGP_CMAKE = '''
cmake_minimum_required(VERSION 3.18)
project(testbed VERSION 1.0 LANGUAGES C CXX CUDA)
find_package(Python 3.7 COMPONENTS Interpreter Development)
if (Python_FOUND)
	add_library(pyngp SHARED src/python_api.cu)
	set_target_properties(pyngp PROPERTIES CXX_VISIBILITY_PRESET "hidden")
	target_link_libraries(pyngp PUBLIC ngp ${PYTHON_LIBRARIES} pybind11::module)
	pybind11_extension(pyngp)
endif()
'''

NGP_RUN = '''
import argparse

from common import *

import pyngp as ngp # noqa


def main(args):
    testbed = ngp.Testbed(ngp.TestbedMode.Nerf)
    testbed.load_training_data(args.scene)
'''


def test_cmake_pybind11_extension_of_a_shared_library_is_a_python_module():
    from auditor.project.cmake import commands, python_module_targets

    assert python_module_targets(commands(NGP_CMAKE)) == {"pyngp": _line(NGP_CMAKE, "add_library(pyngp")}
    plain = NGP_CMAKE.replace("\tpybind11_extension(pyngp)\n", "").replace(" pybind11::module", "")
    assert python_module_targets(commands(plain)) == {}


def test_cmake_built_binding_in_a_tree(tmp_path):
    # a binding no rule names (instant-ngp's `pyngp` is NPU878's by name): the tree's CMake build proves it (NPU320)
    cmake, run_py = NGP_CMAKE.replace("pyngp", "pyneus"), NGP_RUN.replace("pyngp", "pyneus")
    write_tree(tmp_path, {"CMakeLists.txt": cmake, "scripts/run.py": run_py,
                          "scripts/common.py": "import os\nROOT_DIR = os.path.dirname(__file__)\n"})
    found = _tree_findings(tmp_path)
    run = next(v for k, v in found.items() if k.endswith("scripts/run.py"))
    for needle in ("import pyneus", "ngp.Testbed("):
        assert any(c[0] == _line(run_py, needle) and c[1] == "NPU320" for c in run), (needle, run)


def test_pointnet2_ops_is_a_source_built_cuda_library():
    # PoinTr utils/misc.py: pointnet2_ops has no PyPI distribution, installed from the git URL (lead decision 13)
    src = '''
    from pointnet2_ops import pointnet2_utils

    def fps(data, number):
        fps_idx = pointnet2_utils.furthest_point_sample(data, number)
        return pointnet2_utils.gather_operation(data.transpose(1, 2).contiguous(), fps_idx)
    '''
    codes = _codes(src, "misc.py")
    for needle in ("from pointnet2_ops", "furthest_point_sample(", "gather_operation("):
        assert _at(codes, _line(src, needle), "NPU878"), needle
    assert not any(c[1] == "NPU416" for c in codes)
    # spconv is published on PyPI as CUDA wheels: third_party stays
    assert any(c[1] == "NPU416" for c in _codes("import spconv.pytorch as spconv\n", "net.py"))


# FateZero video_diffusion/prompt_attention/attention_register.py (trimmed): diffusers 0.x CrossAttention's method
FATEZERO_ATTENTION = '''
import torch


def register_attention_control(model, controller):
    def attention_controlled_forward(self, place_in_unet, attention_type='cross'):
        def forward(hidden_states, encoder_hidden_states=None, attention_mask=None):
            query = self.reshape_heads_to_batch_dim(self.to_q(hidden_states))
            if self._use_memory_efficient_attention_xformers and query.shape[-2] > 32 ** 2:
                # for large attention map of 64X64, use xformers to save memory
                hidden_states = self._memory_efficient_attention_xformers(query, key, value, attention_mask)
                hidden_states = hidden_states.to(query.dtype)
            else:
                hidden_states = self._attention(query, key, value, attention_mask)
            return hidden_states
        return forward
'''


def test_inherited_diffusers_xformers_method():
    codes = _codes(FATEZERO_ATTENTION, "attention_register.py")
    line = _line(FATEZERO_ATTENTION, "= self._memory_efficient_attention_xformers(")
    assert (line, "NPU864", "warning") in codes
    assert not any(c[1] == "NPU864" and c[0] != line for c in codes)


def test_xformers_info_command():
    src = '''
    import os
    os.system("accelerate env")
    os.system("python -m xformers.info")
    print("run python -m xformers.info to see the kernels.")
    '''
    codes = _codes(src, "test_install.py")
    assert _at(codes, _line(src, 'os.system("python -m xformers.info")'), "NPU865")
    assert not _at(codes, _line(src, "print("), "NPU865")


# LongLM SelfExtend.py / example.py (trimmed): the default names Triton; the example turns flash attention off
SELFEXTEND = '''
from functools import partial

import self_extend_patch as SE
from self_extend_patch.utils import modify_method_of_instance


def apply(loaded_model, group_size, window_size, enable_flash_attention=False, scale_base=-1, flash_attention_impl="triton"):
    arch_name = loaded_model.__class__.__name__
    if 'Llama' in arch_name:
        if enable_flash_attention:
            if flash_attention_impl == "flash_attn":
                self_extend_attention_forward = partial(SE.flash_forward, group_size_1=group_size)
            elif flash_attention_impl == "triton":
                self_extend_attention_forward = partial(SE.triton_forward, group_size_1=group_size)
            modify_method_of_instance(loaded_model, "LlamaFlashAttention2", "_flash_attention_forward",
                                      self_extend_attention_forward)
    return loaded_model
'''

SELFEXTEND_EXAMPLE = '''
import SelfExtend


def run(model, group_size, window_size):
    SelfExtend.apply(model, group_size, window_size, enable_flash_attention=False)
    return model
'''


def test_triton_implementation_default_is_not_spread_to_callers(tmp_path):
    write_tree(tmp_path, {"SelfExtend.py": SELFEXTEND, "example.py": SELFEXTEND_EXAMPLE})
    found = _tree_findings(tmp_path)
    own = next(v for k, v in found.items() if k.endswith("SelfExtend.py"))
    assert any(c[1] == "NPU855" for c in own)
    example = next((v for k, v in found.items() if k.endswith("example.py")), [])
    assert not any(c[1] == "NPU320" for c in example), example


def test_mmcv_npu_op_table_is_generated_from_mmcv_source():
    # rules/kernel_mmcv_npu_ops.yaml is rules/gen/mmcv_npu_ops.py's output from its pins (tests/test_rules_generators.py
    # checks byte equality); here: the pins name mmcv's release and commit, and both rules read the same op list
    import json

    import yaml

    root = Path(__file__).resolve().parent.parent
    pins = json.loads((root / "rules" / "gen" / "inputs" / "mmcv_npu_ops.json").read_text())
    origin = pins["originals"]["mmcv"]
    assert origin["version"].startswith("v") and len(origin["commit"]) == 40
    ops = pins["facts"]["npu_built_ops"]
    assert "ms_deform_attn_forward" in ops and "nms" in ops and "correlation_forward" not in ops
    doc = yaml.safe_load((root / "rules" / "kernel_mmcv_npu_ops.yaml").read_text())
    rules = {r["code"]: r for r in doc["rules"]}
    assert rules["NPU853"]["match"][0]["qualname"] == [f"mmcv._ext.{op}" for op in ops]
    assert rules["NPU854"]["when"]["arg"]["values"] == ops
    assert origin["commit"] in rules["NPU853"]["source_note"]
    assert not any(r["code"] in ("NPU853", "NPU854") for r in yaml.safe_load(
        (root / "rules" / "kernel_extensions.yaml").read_text())["rules"])


def test_function_calls_reader_follows_mmcv_dispatch():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rules" / "gen"))
    from mmcv_npu_ops import function_calls

    cpp = """// Copyright (c) OpenMMLab. All rights reserved
#include "pytorch_device_registry.hpp"
Tensor nms_impl(Tensor boxes, Tensor scores, float iou_threshold, int offset) {
  return DISPATCH_DEVICE_IMPL(nms_impl, boxes, scores, iou_threshold, offset);
}
/* Tensor nms(Tensor boxes) { return old_impl(boxes); } */
Tensor nms(Tensor boxes, Tensor scores, float iou_threshold, int offset) {
  const char *name = "not_a_call_impl(";
  return nms_impl(boxes, scores, iou_threshold, offset);
}
"""
    calls = function_calls(cpp)
    assert "nms_impl" in calls["nms"] and "old_impl" not in calls["nms"] and "not_a_call_impl" not in calls["nms"]


def test_instant_ngp_binding_per_file():
    codes = _codes(NGP_RUN, "run.py")
    for needle in ("import pyngp", "ngp.Testbed("):
        assert _at(codes, _line(NGP_RUN, needle), "NPU878"), needle
    # a project's own `ngp` module (torch-ngp's Python package) is no binding
    src = '''
    from nerf.network import NeRFNetwork
    import ngp_utils as ngp

    model = ngp.build(NeRFNetwork())
    '''
    assert not any(c[1] == "NPU878" for c in _codes(src, "main_nerf.py"))


# TPVFormer (trimmed): requirements.txt pins mmcv_full==1.4.0; the BEVFormer-style deformable attention loads mmcv's op
MSDA = '''
from mmcv.utils import ext_loader
ext_module = ext_loader.load_ext(
    '_ext', ['ms_deform_attn_backward', 'ms_deform_attn_forward'])


def forward(value, shapes, level_start_index, sampling_locations, attention_weights, im2col_step):
    return ext_module.ms_deform_attn_forward(value, shapes, level_start_index, sampling_locations,
                                             attention_weights, im2col_step=im2col_step)
'''


def _msda_findings(tmp_path, requirements):
    files = {"tpvformer/modules/msda.py": MSDA}
    if requirements is not None:
        files["requirements.txt"] = requirements
    write_tree(tmp_path, files)
    for r in run_static([tmp_path], jobs=1, respect_gitignore=False, cache_dir=tmp_path / ".cache").results:
        if r.path.endswith("msda.py"):
            return [f for f in r.findings if f.code in ("NPU853", "NPU854")]
    return []


def test_mmcv_pin_older_than_the_npu_ops_makes_the_op_fail(tmp_path):
    found = _msda_findings(tmp_path, "mmcv_full==1.4.0\ntimm\n")
    assert {f.code for f in found} == {"NPU853", "NPU854"}
    assert all(f.severity == "error" and "predates" in f.message and "1.4.0" in f.message for f in found)


def test_mmcv_pin_silent_or_new_enough(tmp_path):
    silent = _msda_findings(tmp_path / "a", None)
    assert silent and all(f.severity == "info" and "unverified" in f.message for f in silent)
    new = _msda_findings(tmp_path / "b", "mmcv>=2.0.0\n")
    assert new and all(f.severity == "info" and "unverified" not in f.message for f in new)
