"""t28a (issue 14, session 28; tuned on test45): Triton's CUDA shared-memory client, TensorRT / PyCUDA / cuda-python
chosen by name (lead decision 34), numba.cuda's `.forall` launch, a Cython extension linking CUDA and TensorRT (lead
decision 18), a TensorRT plugin library loaded with ctypes, and three precision fixes (map_location keys, TensorRT enum
members passed to calls, Warp's import, cuDNN's module import). Each on code shaped like the tree it came from, with a control."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import categories_at, codes_at, finding_keys_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# InsightFace-REST if_rest/core/model_zoo/exec_backends/triton_backend.py
_TRITON = '''
import os

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.utils.cuda_shared_memory as cudashm
from tritonclient.utils import triton_to_np_dtype


class Arcface:
    def __init__(self, rec_name, triton_uri):
        self.triton_client = grpcclient.InferenceServerClient(url=triton_uri)
        self.model_name = rec_name

    def prepare(self, max_batch_size, w, h):
        self.in_handle_name = f'{self.model_name}_data_{os.getpid()}'
        self.input_bytesize = 12 * w * h * max_batch_size
        self.in_handle = cudashm.create_shared_memory_region(
            self.in_handle_name, self.input_bytesize, 0)
        self.triton_client.unregister_cuda_shared_memory(self.in_handle_name)
        self.triton_client.register_cuda_shared_memory(
            self.in_handle_name, cudashm.get_raw_handle(self.in_handle), 0,
            self.input_bytesize)

    def get_embedding(self, blob):
        cudashm.set_shared_memory_region(self.in_handle, [blob])
        inputs = [grpcclient.InferInput("data", list(blob.shape), "FP32")]
        inputs[-1].set_shared_memory(self.in_handle_name, blob.nbytes)
        return triton_to_np_dtype("FP32")
'''

# the system shared-memory twin of the same client: host memory, runs anywhere
_TRITON_SYSTEM = '''
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm


def prepare(client, name, size):
    handle = shm.create_shared_memory_region(name, "/" + name, size)
    client.unregister_system_shared_memory(name)
    client.register_system_shared_memory(name, "/" + name, size)
    shm.set_shared_memory_region(handle, [b"0" * size])
    return handle
'''


def test_triton_cuda_shared_memory_is_third_party(engine):
    found = finding_keys_by_line(engine, _TRITON)
    for needle in ("import tritonclient.utils.cuda_shared_memory as cudashm", "cudashm.create_shared_memory_region(",
                   "unregister_cuda_shared_memory(", "self.triton_client.register_cuda_shared_memory(",
                   "cudashm.get_raw_handle(", "cudashm.set_shared_memory_region("):
        line = line_of(_TRITON, needle)
        assert codes_at(found, line) == {"NPU419"}, needle
        assert categories_at(found, line) == {"third_party"}, needle
    # the gRPC client itself and the dtype helper run without CUDA
    assert not found.get(line_of(_TRITON, "import tritonclient.grpc as grpcclient"))
    assert not found.get(line_of(_TRITON, "return triton_to_np_dtype"))


def test_triton_system_shared_memory_is_quiet(engine):
    assert finding_keys_by_line(engine, _TRITON_SYSTEM) == {}


# YOLOv8-TensorRT infer-cls-without-torch.py and InsightFace-REST if_rest/core/processing.py / getter.py
_ENGINE_CHOICE = '''
import argparse


class Processing:
    def __init__(self, det_name: str = 'retinaface_r50_v1', backend_name: str = 'trt', max_det_batch_size: int = 1):
        self.backend_name = backend_name


def get_model(model_name, backend_name):
    if backend_name == "trt":
        return model_name


def main(args: argparse.Namespace) -> None:
    if args.method == 'cudart':
        from models.cudart_api import TRTEngine
    elif args.method == 'pycuda':
        from models.pycuda_api import TRTEngine
    else:
        raise NotImplementedError
    return TRTEngine(args.engine)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--engine', type=str, help='Engine file')
    parser.add_argument('--method', type=str, default='cudart', help='CUDART pipeline')
    parser.add_argument('--interp', type=str, default='bilinear', help='resize method')
    return parser.parse_args()
'''

_ENGINE_CHOICE_CONTROL = '''
import argparse


class Processing:
    def __init__(self, det_name: str = 'retinaface_r50_v1', backend_name: str = 'onnx'):
        self.backend_name = backend_name


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--method', type=str, default='bilinear', help='resize method')
    parser.add_argument('--backend', type=str, choices=['onnx', 'trt'], default='onnx')
    # MQBench application/cls_example/train_qat.py: a quantization scheme for a later TensorRT build, run in PyTorch
    parser.add_argument('--quant-backend', dest='backend', default='tensorrt', type=str, help='backend type for QAT')
    return parser.parse_args()
'''


def test_engine_chosen_by_name_is_third_party(engine):
    found = finding_keys_by_line(engine, _ENGINE_CHOICE)
    assert found[line_of(_ENGINE_CHOICE, "backend_name: str = 'trt'")] == {("NPU426", "third_party", "error")}
    # the option's default chooses the engine: one finding, not NPU064's "links the CUDA toolkit" beside it
    assert found[line_of(_ENGINE_CHOICE, "default='cudart'")] == {("NPU426", "third_party", "error")}
    for needle in ("if args.method == 'cudart':", "elif args.method == 'pycuda':", 'if backend_name == "trt":'):
        assert found[line_of(_ENGINE_CHOICE, needle)] == {("NPU489", "third_party", "info")}, needle
    assert not found.get(line_of(_ENGINE_CHOICE, "default='bilinear'"))


def test_other_engine_defaults_are_quiet(engine):
    assert finding_keys_by_line(engine, _ENGINE_CHOICE_CONTROL) == {}


# gpu-bdb queries/q03 (a numba.cuda kernel launched over a cuDF column)
_FORALL = '''
from numba import cuda


@cuda.jit
def find_items_kernel(wcs_user_sk, out_col, N):
    i = cuda.grid(1)
    if i < wcs_user_sk.size:
        out_col[i] = N


def apply_find_items_viewed(df, N):
    size = len(df)
    out_arr = cuda.device_array(size * N, dtype=df["wcs_item_sk"].dtype)
    find_items_kernel.forall(size)(
        df["wcs_user_sk"], out_arr, N,
    )
    return out_arr


class CUDAFunctionManager:
    def run(self, x):
        self.cuda_step[self.grid, self.block, self.stream](x)
'''

# sympy-style `forall` and a plain 3-index subscript without numba.cuda in the file
_FORALL_CONTROL = '''
import numpy as np


def check(prop, values):
    return prop.forall(values)(np.asarray(values))


def pick(table, i, j, k):
    return table[i, j, k](0)
'''


def test_numba_forall_and_stream_launches(engine):
    found = finding_keys_by_line(engine, _FORALL)
    assert ("NPU375", "kernel", "error") in found[line_of(_FORALL, "find_items_kernel.forall(size)(")]
    assert ("NPU375", "kernel", "error") in found[line_of(_FORALL, "self.cuda_step[self.grid, self.block, self.stream](x)")]


def test_forall_without_numba_cuda_is_quiet(engine):
    assert finding_keys_by_line(engine, _FORALL_CONTROL) == {}


# tensorrt_demos setup.py (a Cython extension linking CUDA and TensorRT)
_CYTHON_SETUP = '''
from distutils.core import setup
from distutils.extension import Extension
from Cython.Distutils import build_ext
from Cython.Build import cythonize

import numpy

library_dirs = [
    '/usr/local/cuda/lib64',
    '/usr/local/lib',
]

libraries = [
    'nvinfer',
    'cudnn',
    'rt',
]

setup(
    cmdclass={'build_ext': build_ext},
    ext_modules=cythonize(
        Extension('pytrt', sources=['pytrt.pyx'], language='c++', library_dirs=library_dirs, libraries=libraries,
                  extra_compile_args=['-O3', '-I' + numpy.__path__[0] + '/core/include']),
    ),
)
'''

_C_SETUP = '''
from setuptools import Extension, setup

libraries = [
    'm',
    'pthread',
]

setup(name="fastmath", ext_modules=[Extension("fastmath", sources=["fastmath.c"], libraries=libraries)])
'''


def test_cython_extension_linking_cuda_and_tensorrt_is_kernel(engine):
    found = finding_keys_by_line(engine, _CYTHON_SETUP, "setup.py")
    assert found[line_of(_CYTHON_SETUP, "'/usr/local/cuda/lib64',")] == {("NPU353", "kernel", "error")}
    # decision 18: a multi-line list is reported on its first CUDA-only element, not on its name
    assert found[line_of(_CYTHON_SETUP, "'nvinfer',")] == {("NPU805", "kernel", "error")}
    assert not found.get(line_of(_CYTHON_SETUP, "libraries = ["))


def test_c_extension_without_cuda_is_quiet(engine):
    assert finding_keys_by_line(engine, _C_SETUP, "setup.py") == {}


# tensorrt_demos utils/ssd.py and utils/yolo_with_plugins.py
_PLUGIN = '''
import ctypes

import tensorrt as trt


class TrtSSD(object):
    def _load_plugins(self):
        if trt.__version__[0] < '7':
            ctypes.CDLL("ssd/libflattenconcat.so")
        trt.init_libnvinfer_plugins(self.trt_logger, '')


try:
    ctypes.cdll.LoadLibrary('./plugins/libyolo_layer.so')
except OSError as e:
    raise SystemExit('ERROR: failed to load ./plugins/libyolo_layer.so.') from e
'''

_PLUGIN_CONTROL = '''
import ctypes

_lib = ctypes.CDLL("build/libfastops.so")


def dot(a, b):
    return _lib.dot(a, b)
'''


def test_tensorrt_plugin_library_is_kernel(engine):
    found = finding_keys_by_line(engine, _PLUGIN)
    assert found[line_of(_PLUGIN, 'ctypes.CDLL("ssd/libflattenconcat.so")')] == {("NPU811", "kernel", "error")}
    assert found[line_of(_PLUGIN, "ctypes.cdll.LoadLibrary(")] == {("NPU811", "kernel", "error")}


def test_library_without_tensorrt_is_quiet(engine):
    assert finding_keys_by_line(engine, _PLUGIN_CONTROL) == {}


# DepthContrast utils/main_utils.py; the DDP tutorial's map_location
_MAP_LOCATION = '''
import torch


def restart_from_checkpoint(checkpoint_fn, rank):
    ckp = torch.load(checkpoint_fn, map_location={'cuda:0': 'cpu'})
    moved = torch.load(checkpoint_fn, map_location={'cuda:%d' % 0: 'cuda:%d' % rank})
    return ckp, moved
'''


def test_map_location_keys_name_the_saved_device(engine):
    found = finding_keys_by_line(engine, _MAP_LOCATION)
    # the key is where the checkpoint was saved: no error; t33a reports it as a warning (checkpoints the port saves
    # carry "npu:0", which the map does not take), as test13 / test21 / test28 / test56 label it
    assert found.get(line_of(_MAP_LOCATION, "{'cuda:0': 'cpu'}")) == {("NPU003", "device", "warning")}
    # the value is a device this code picks: still an error
    assert ("NPU003", "device", "error") in found[line_of(_MAP_LOCATION, "'cuda:%d' % rank")]


# YOLOv8-TensorRT models/api.py and tensorrt_demos utils/modnet.py
_TRT_ENUMS = '''
import tensorrt as trt


def SPPF(network, weights, input, c1, c2, k, layer_name):
    conv1 = network.add_convolution_nd(input, c2, trt.DimsHW(1, 1), weights[layer_name + '.w'])
    pool1 = network.add_pooling_nd(conv1.get_output(0), trt.PoolingType.MAX,
                                   trt.DimsHW(k, k))
    sigmoid = network.add_activation(pool1.get_output(0),
                                     trt.ActivationType.SIGMOID)
    return sigmoid


def check(engine):
    assert engine.get_binding_dtype('input') == trt.tensorrt.DataType.FLOAT


def build(builder):
    EXPLICIT_BATCH = 1 << (int)(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(EXPLICIT_BATCH)
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.FP16)
    return network, config
'''


def test_tensorrt_enum_members_passed_to_calls(engine):
    found = finding_keys_by_line(engine, _TRT_ENUMS)
    # lead decisions 18 / 40: the member handed to a call of a TensorRT object is reported on the call's first line,
    # not on its own continuation line
    assert not found.get(line_of(_TRT_ENUMS, "trt.ActivationType.SIGMOID)"))
    assert found[line_of(_TRT_ENUMS, "sigmoid = network.add_activation(")] == {("NPU409", "third_party", "error")}
    assert found[line_of(_TRT_ENUMS, "config.set_flag(trt.BuilderFlag.FP16)")] == {("NPU409", "third_party", "error")}
    assert found[line_of(_TRT_ENUMS, "EXPLICIT_BATCH = 1 <<")] == {("NPU409", "third_party", "error")}
    assert found[line_of(_TRT_ENUMS, "trt.DimsHW(k, k))")] == {("NPU409", "third_party", "error")}
    # compared, not passed: the line that checks the engine's dtype keeps its finding (test45 labels it)
    assert found[line_of(_TRT_ENUMS, "trt.tensorrt.DataType.FLOAT")] == {("NPU409", "third_party", "error")}


# NCLaw experiments/train.py (Warp simulation with a CPU path)
_WARP = '''
import torch
import warp as wp

wp.init()


@wp.kernel
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 2.0 * a[i]


def run(x):
    wp.launch(scale, dim=x.shape[0], inputs=[wp.from_torch(x)], device="cuda:0")
'''


def test_warp_import_and_init_are_warnings_launches_errors(engine):
    found = finding_keys_by_line(engine, _WARP)
    assert found[line_of(_WARP, "import warp as wp")] == {("NPU314", "kernel", "warning")}
    assert found[line_of(_WARP, "wp.init()")] == {("NPU314", "kernel", "warning")}
    assert ("NPU314", "kernel", "error") in found[line_of(_WARP, "@wp.kernel")]
    assert ("NPU314", "kernel", "error") in found[line_of(_WARP, "wp.launch(")]


# 4DMOS src/mos4d/utils/seed.py (MapMOS and NCLaw import cuDNN's module the same way)
_SEED = '''
import os
import random

import numpy as np
import torch
import torch.backends.cudnn


def seed_everything(seed: int = 66):
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.enabled = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
'''


def test_cudnn_module_import_beside_its_spelled_uses_is_info(engine):
    found = finding_keys_by_line(engine, _SEED)
    assert found[line_of(_SEED, "import torch.backends.cudnn")] == {("NPU006", "device", "info")}
    # the uses carry the warning
    assert found[line_of(_SEED, "torch.backends.cudnn.benchmark = False")] == {("NPU006", "device", "warning")}
