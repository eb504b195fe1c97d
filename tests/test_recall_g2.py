"""g2 (session 35): one whole-tree fact, "these module names are built from CUDA sources by this tree", fed from more of
the ways real setup scripts build them (setup_py.cuda_extension_names): a builder name bound to CUDAExtension under a
CUDA check (maskrcnn-benchmark / Deformable-DETR `get_extensions()`: `extension = CUDAExtension` ...
`extension("pkg._C", sources)`), the OpenMMLab `make_cuda_ext(name, module, ...)` helpers whose module name folds from
the call's arguments, and build scripts beside setup.py (GPTQ's `setup_cuda.py`). The imports of those names, their
aliases and the members used from them get the own-extension finding (NPU320, decision 5's kernel) through the
cross-file pass; the nearest negatives stay quiet (a C++-only build, a name the tree does not build, comments,
docstrings and messages)."""
from __future__ import annotations

import ast
from auditor.project.setup_py import cuda_extension_names
from static_snippets import lines_with_code, write_tree

# facebookresearch/maskrcnn-benchmark setup.py (the shape of Deformable-DETR's models/ops/setup.py, DCNv2, PDVC,
# MaskTextSpotterV3, nnDetection, hand_object_detector, InternImage's DCNv3)
MASKRCNN_SETUP = '''#!/usr/bin/env python
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "maskrcnn_benchmark", "csrc")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension

    extra_compile_args = {"cxx": []}
    define_macros = []

    if torch.cuda.is_available() and CUDA_HOME is not None:
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = ["-DCUDA_HAS_FP16=1"]

    sources = [os.path.join(extensions_dir, s) for s in sources]
    ext_modules = [
        extension(
            "maskrcnn_benchmark._C",
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


setup(
    name="maskrcnn_benchmark",
    packages=find_packages(exclude=("configs", "tests")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
'''

MASKRCNN_NMS = '''# NOTE: the _C extension is built by setup.py with nvcc
from maskrcnn_benchmark import _C

nms = _C.nms


def batched_nms(boxes, scores, thresh):
    """Runs _C.nms on each image's boxes."""
    keep = _C.nms(boxes, scores, thresh)
    print("kept boxes from _C.nms:", len(keep))
    return keep
'''

# OpenGVLab/InternImage ops_dcnv3/functions/dcnv3_func.py (its setup.py is the maskrcnn-benchmark shape, named "DCNv3")
DCNV3_FUNC = '''from __future__ import absolute_import

import torch
from torch.autograd import Function
from torch.cuda.amp import custom_bwd, custom_fwd

import DCNv3


class DCNv3Function(Function):
    @staticmethod
    def forward(ctx, input, offset, mask, kernel_h, kernel_w, im2col_step):
        ctx.im2col_step = im2col_step
        output = DCNv3.dcnv3_forward(input, offset, mask, kernel_h, kernel_w, ctx.im2col_step)
        return output
'''

DCNV3_SETUP = MASKRCNN_SETUP.replace('"maskrcnn_benchmark._C"', '"DCNv3"')

# Megvii-BaseDetection/BEVDepth setup.py (the OpenMMLab helper: BasicSR, mmdet3d, HybrIK, OpenPCDet, Sparse4D)
BEVDEPTH_SETUP = '''import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


def make_cuda_ext(name, module, sources, sources_cuda=[], extra_args=[], extra_include_path=[]):
    define_macros = []
    extra_compile_args = {'cxx': [] + extra_args}

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = extra_args + ['-D__CUDA_NO_HALF_OPERATORS__']
        sources += sources_cuda
    else:
        print('Compiling {} without CUDA'.format(name))
        extension = CppExtension

    return extension(
        name='{}.{}'.format(module, name),
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        include_dirs=extra_include_path,
        define_macros=define_macros,
        extra_compile_args=extra_compile_args,
    )


setup(
    name='BEVDepth',
    packages=find_packages(),
    ext_modules=[
        make_cuda_ext(
            name='voxel_pooling_train_ext',
            module='bevdepth.ops.voxel_pooling_train',
            sources=['src/voxel_pooling_train_forward.cpp'],
            sources_cuda=['src/voxel_pooling_train_forward_cuda.cu'],
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
)
'''

BEVDEPTH_OP = '''import torch
from torch.autograd import Function

from bevdepth.ops.voxel_pooling_train import voxel_pooling_train_ext


class VoxelPoolingTrain(Function):
    @staticmethod
    def forward(ctx, geom_xyz, input_features, voxel_num):
        output = input_features.new_zeros(2, 3)
        voxel_pooling_train_ext.voxel_pooling_train_forward_wrapper(geom_xyz, input_features, output)
        return output
'''

# IST-DASLab/gptq setup_cuda.py and quant.py
GPTQ_SETUP = '''from setuptools import setup, Extension
from torch.utils import cpp_extension

setup(
    name='quant_cuda',
    ext_modules=[cpp_extension.CUDAExtension(
        'quant_cuda', ['quant_cuda.cpp', 'quant_cuda_kernel.cu']
    )],
    cmdclass={'build_ext': cpp_extension.BuildExtension}
)
'''

GPTQ_QUANT = '''import torch
import torch.nn as nn

import quant_cuda


class QuantLinear(nn.Module):
    def forward(self, x):
        y = torch.zeros(x.shape[0], self.outfeatures, dtype=x.dtype, device=x.device)
        quant_cuda.vecquant3matmul(x, self.qweight, y, self.scales, self.zeros)
        return y
'''


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_builder_name_bound_to_cuda_extension_names_its_module():
    assert cuda_extension_names(ast.parse(MASKRCNN_SETUP)) == {"maskrcnn_benchmark._C": _line(MASKRCNN_SETUP,
                                                                                               "        extension(")}
    # `Extension = CUDAExtension` (Pytorch-Correlation-extension) and a conditional expression (PCSeg's range_lib)
    correlation = ("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension\n"
                   "def launch_setup():\n"
                   "    if CPU_ONLY:\n        Extension = CppExtension\n"
                   "    else:\n        Extension = CUDAExtension\n"
                   "    return [Extension('spatial_correlation_sampler_backend', source_files)]\n")
    assert cuda_extension_names(ast.parse(correlation)) == {"spatial_correlation_sampler_backend": 7}
    ranged = ("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension\n"
              "extension_type = CUDAExtension if has_cuda else CppExtension\n"
              "modules = [extension_type(name='rangelib_cuda', sources=sources)]\n")
    assert cuda_extension_names(ast.parse(ranged)) == {"rangelib_cuda": 3}
    aliased = "from torch.utils.cpp_extension import CUDAExtension as CE\next = CE('roi_pool_cuda', ['roi.cpp'])\n"
    assert cuda_extension_names(ast.parse(aliased)) == {"roi_pool_cuda": 2}


def test_a_cpp_only_builder_and_another_scopes_binding_name_nothing():
    cpp_only = MASKRCNN_SETUP.replace("        extension = CUDAExtension\n", "        pass\n")
    assert cuda_extension_names(ast.parse(cpp_only)) == {}
    # a module-level setuptools `Extension` is not the `Extension = CUDAExtension` of another function's scope
    scoped = ("from setuptools import Extension\nfrom torch.utils.cpp_extension import CUDAExtension\n"
              "def cuda_ext():\n    Extension = CUDAExtension\n    return Extension('gpu_ops', ['k.cu'])\n"
              "mesh = Extension('mesh_cpu', ['mesh.cpp'])\n")
    assert cuda_extension_names(ast.parse(scoped)) == {"gpu_ops": 5}


def test_a_builder_chosen_per_accelerator_is_a_multi_backend_build():
    # open-mmlab/mmcv setup.py's get_extensions(): the same `extension(name='mmcv._ext', ...)` is a CUDAExtension, an
    # NpuExtension (mmcv's Ascend build) or an MLUExtension by the platform: the module is not CUDA code only
    mmcv = """from torch.utils.cpp_extension import CppExtension, CUDAExtension


def get_extensions():
    extensions = []
    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('MMCV_WITH_CUDA', None)]
        extension = CUDAExtension
    elif is_torch_npu_available():
        from torch_npu.utils.cpp_extension import NpuExtension
        define_macros += [('MMCV_WITH_NPU', None)]
        extension = NpuExtension
    else:
        extension = CppExtension
    ext_ops = extension(name='mmcv._ext', sources=op_files, define_macros=define_macros)
    extensions.append(ext_ops)
    return extensions
"""
    assert cuda_extension_names(ast.parse(mmcv)) == {}
    cuda_or_cpu = mmcv.replace("extension = NpuExtension", "extension = CppExtension")
    assert cuda_extension_names(ast.parse(cuda_or_cpu)) == {"mmcv._ext": _line(cuda_or_cpu, "ext_ops = extension(")}


def test_a_helper_building_the_module_name_from_its_arguments():
    line = _line(BEVDEPTH_SETUP, "        make_cuda_ext(")
    assert cuda_extension_names(ast.parse(BEVDEPTH_SETUP)) == {
        "bevdepth.ops.voxel_pooling_train.voxel_pooling_train_ext": line}
    # the other spellings of the name: OpenPCDet's `'%s.%s' % (module, name)`, BasicSR's f-string, positional
    # arguments, and Sparse4D's `module="."` (the folder itself)
    for spelled in ("'%s.%s' % (module, name)", "f'{module}.{name}'"):
        text = BEVDEPTH_SETUP.replace("'{}.{}'.format(module, name)", spelled)
        assert set(cuda_extension_names(ast.parse(text))) == {
            "bevdepth.ops.voxel_pooling_train.voxel_pooling_train_ext"}
    positional = BEVDEPTH_SETUP.replace("name='voxel_pooling_train_ext',\n            module='bevdepth.ops.voxel_"
                                        "pooling_train',", "'voxel_pooling_train_ext', '.',")
    assert set(cuda_extension_names(ast.parse(positional))) == {"voxel_pooling_train_ext"}
    # a module name the call does not spell (`module=get_module()`) folds to nothing
    unknown = BEVDEPTH_SETUP.replace("module='bevdepth.ops.voxel_pooling_train'", "module=get_module()")
    assert cuda_extension_names(ast.parse(unknown)) == {}
    # a helper that builds only C++ extensions names nothing
    cpp = BEVDEPTH_SETUP.replace("extension = CUDAExtension", "extension = CppExtension")
    assert cuda_extension_names(ast.parse(cpp)) == {}


def test_imports_and_uses_of_a_get_extensions_build(tmp_path):
    root = tmp_path / "maskrcnn-benchmark"
    write_tree(root, {"setup.py": MASKRCNN_SETUP, "maskrcnn_benchmark/__init__.py": "",
                  "maskrcnn_benchmark/layers/__init__.py": "", "maskrcnn_benchmark/layers/nms.py": MASKRCNN_NMS})
    found = lines_with_code(root, "NPU320")
    # the import, the alias's binding and the call; not the comment, the docstring or the message
    assert found.get("maskrcnn_benchmark/layers/nms.py") == {
        _line(MASKRCNN_NMS, "from maskrcnn_benchmark import _C"), _line(MASKRCNN_NMS, "nms = _C.nms"),
        _line(MASKRCNN_NMS, "keep = _C.nms(")}
    # a C++-only build of the same name is not CUDA code
    cpp_only = tmp_path / "cpp-only"
    write_tree(cpp_only, {"setup.py": MASKRCNN_SETUP.replace("        extension = CUDAExtension\n", "        pass\n"),
                      "maskrcnn_benchmark/__init__.py": "", "maskrcnn_benchmark/layers/__init__.py": "",
                      "maskrcnn_benchmark/layers/nms.py": MASKRCNN_NMS})
    assert "maskrcnn_benchmark/layers/nms.py" not in lines_with_code(cpp_only, "NPU320")


def test_imports_of_dcnv3_and_helper_built_modules(tmp_path):
    intern = tmp_path / "InternImage"
    write_tree(intern, {"ops_dcnv3/setup.py": DCNV3_SETUP, "ops_dcnv3/functions/__init__.py": "",
                    "ops_dcnv3/functions/dcnv3_func.py": DCNV3_FUNC})
    assert lines_with_code(intern, "NPU320").get("ops_dcnv3/functions/dcnv3_func.py") == {
        _line(DCNV3_FUNC, "import DCNv3"), _line(DCNV3_FUNC, "DCNv3.dcnv3_forward")}
    bev = tmp_path / "BEVDepth"
    write_tree(bev, {"setup.py": BEVDEPTH_SETUP, "bevdepth/__init__.py": "", "bevdepth/ops/__init__.py": "",
                 "bevdepth/ops/voxel_pooling_train/__init__.py": "",
                 "bevdepth/ops/voxel_pooling_train/voxel_pooling_train.py": BEVDEPTH_OP})
    assert lines_with_code(bev, "NPU320").get("bevdepth/ops/voxel_pooling_train/voxel_pooling_train.py") == {
        _line(BEVDEPTH_OP, "import voxel_pooling_train_ext"), _line(BEVDEPTH_OP, "voxel_pooling_train_ext.voxel")}


def test_a_build_script_beside_setup_py_names_its_extension(tmp_path):
    # `quant_cuda` itself is a name the rules know (NPU379): the fact is shown on the same build under another name
    setup, quant = GPTQ_SETUP.replace("quant_cuda", "vecquant"), GPTQ_QUANT.replace("quant_cuda", "vecquant")
    root = tmp_path / "gptq"
    write_tree(root, {"setup_cuda.py": setup, "quant.py": quant})
    assert lines_with_code(root, "NPU320").get("quant.py") == {_line(quant, "import vecquant"),
                                                          _line(quant, "vecquant.vecquant3matmul")}
    # without the script that builds it the name is a module the tree does not build: quiet
    alone = tmp_path / "alone"
    write_tree(alone, {"quant.py": quant})
    assert "quant.py" not in lines_with_code(alone, "NPU320")
