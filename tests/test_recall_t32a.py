"""t32a (session 32): the kernel category's long tail (issue 14; TUNED on the static dev splits). CuPy's and PyCUDA's
kernel objects followed from their builders: launches, loaders and `.get_function` of a compiled module. Shapes from
real code (sepconv / softsplat / PWC-Net correlation layers, chainer-derived ROI ops, cuvarbase, CuPy's docs); each
test has a control that stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[tuple[int, str], str]:
    return {(f.line, f.code): f.category for f in ENGINE.analyze_bytes(src, path).findings}


def _lines(src: bytes, code: str, path: str = "main.py") -> set[int]:
    return {line for line, c in _found(src, path) if c == code}


# the sepconv / softsplat / correlation layers of video frame interpolation and optical flow code: a memoized loader
# compiles the kernel source, its result is launched at once with grid / block / args keywords
MEMOIZED_LAUNCH = b"""import cupy
import torch

kernel_Softsplat_updateOutput = '''
    extern "C" __global__ void kernel_Softsplat_updateOutput(const int n, const float* input, float* output) {
        int intIndex = (blockIdx.x * blockDim.x) + threadIdx.x;
        if (intIndex < n) { output[intIndex] = input[intIndex]; }
    }
'''


def cupy_kernel(strFunction, objVariables):
    strKernel = globals()[strFunction]
    for strName, objValue in objVariables.items():
        strKernel = strKernel.replace('SIZE_0(' + strName + ')', str(objValue.size(0)))
    return strKernel


@cupy.memoize(for_each_device=True)
def cupy_launch(strFunction, strKernel):
    return cupy.cuda.compile_with_cache(strKernel).get_function(strFunction)


class _FunctionSoftsplat(torch.autograd.Function):
    @staticmethod
    def forward(self, input, flow):
        output = input.new_zeros(input.shape)
        if input.is_cuda == True:
            n = output.nelement()
            cupy_launch('kernel_Softsplat_updateOutput', cupy_kernel('kernel_Softsplat_updateOutput', {
                'input': input,
                'output': output,
            }))(
                grid=tuple([int((n + 512 - 1) / 512), 1, 1]),
                block=tuple([512, 1, 1]),
                args=[n, input.data_ptr(), output.data_ptr()]
            )
        elif input.is_cuda == False:
            raise NotImplementedError()
        return output
"""


def test_memoized_cupy_loader_launched_at_once():
    found = _found(MEMOIZED_LAUNCH)
    assert found[(21, "NPU374")] == "kernel"          # compile_with_cache (as before)
    assert found[(30, "NPU374")] == "kernel"          # the launch `cupy_launch(...)(grid=..., block=..., args=...)`
    assert _lines(MEMOIZED_LAUNCH, "NPU374") == {21, 30}    # the string-rewriting helper is plain Python: quiet


# chainer-derived ROI / correlation ops: the loader keeps the compiled module in a local, the caller keeps the kernel
LOADER_LOCALS = b"""from string import Template

import cupy
import torch
from collections import namedtuple

Stream = namedtuple('Stream', ['ptr'])

roi_forward = '''
extern "C" __global__ void roi_forward(const float* bottom_data, float* top_data, int num_rois) {}
'''


@cupy._util.memoize(for_each_device=True)
def load_kernel(kernel_name, code, **kwargs):
    code = Template(code).substitute(**kwargs)
    kernel_code = cupy.cuda.compile_with_cache(code)
    return kernel_code.get_function(kernel_name)


def GET_BLOCKS(N, K=1024):
    return (N + K - 1) // K


class RoIPool(torch.autograd.Function):
    def forward(self, x, rois):
        output = torch.zeros(rois.size(0), x.size(1)).cuda()
        f = load_kernel('roi_forward', roi_forward, Dtype='float')
        f(args=[x.data_ptr(), output.data_ptr(), rois.size(0)],
          block=(1024, 1, 1),
          grid=(GET_BLOCKS(output.numel()), 1, 1),
          stream=Stream(ptr=torch.cuda.current_stream().cuda_stream))
        fn = GET_BLOCKS(4)
        return output
"""


def test_loader_with_locals_and_its_launch():
    lines = _lines(LOADER_LOCALS, "NPU374")
    assert {17, 18, 28, 29} <= lines        # compile, get_function, the loader's call, the launch
    assert 33 not in lines and 21 not in lines   # `GET_BLOCKS(4)`, a plain helper returning a number


# CuPy's documented kernel objects kept at module level (RawKernel, RawModule.get_function, ElementwiseKernel)
MODULE_LEVEL = b"""import cupy as cp

add_kernel = cp.RawKernel(r'''
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
''', 'my_add')

module = cp.RawModule(code=r'''
extern "C" __global__ void scale(float* x) {}
''')
scale = module.get_function('scale')
squared_diff = cp.ElementwiseKernel('float32 x, float32 y', 'float32 z', 'z = (x - y) * (x - y)', 'squared_diff')


def run(x1, x2, y):
    add_kernel((5,), (5,), (x1, x2, y))
    scale((1,), (32,), (y,))
    z = squared_diff(x1, x2)
    w = cp.asarray(z).sum()
    return z, w
"""


def test_module_level_cupy_kernel_objects_and_launches():
    lines = _lines(MODULE_LEVEL, "NPU374")
    assert {3, 11, 14, 15, 19, 20, 21} <= lines
    assert 22 not in lines                  # CuPy arrays stay NPU414 (third_party)


# cuvarbase's PyCUDA modules kept on the instance; a launch through a prepared function
PYCUDA_SELF = b"""import numpy as np
import pycuda.driver as cuda
from pycuda.compiler import SourceModule


class PDMAsyncProcess(object):
    def _compile_and_prepare_functions(self, **kwargs):
        self.module = SourceModule(self.module_txt, options=['--use_fast_math'])
        self.prepared_functions = {}
        for func in self.function_names:
            self.prepared_functions[func] = self.module.get_function(func).prepare(self.dtypes)

    def run(self, data, grid, block):
        func = self.module.get_function('pdm_binless')
        func(data, np.int32(len(data)), block=block, grid=grid)
        self.prepared_functions['x'].prepared_async_call(grid, block, None, data)
"""


def test_pycuda_module_on_self():
    lines = _lines(PYCUDA_SELF, "NPU376")
    assert {8, 11, 14} <= lines            # SourceModule, the kernels taken out of it
    assert _found(PYCUDA_SELF)[(15, "NPU376")] == "kernel"   # `func(...)`: `run` binds `func` only to the kernel
    assert 10 not in lines                 # the other function's loop variable `func`


# torch-ngp's CUDA extensions as stable-dreamfusion / ProlificDreamer's renderer and encoding modules use them
TORCH_NGP = b"""import torch
import torch.nn as nn

import raymarching


def get_encoder(encoding, input_dim=3, multires=6, num_levels=16, level_dim=2, log2_hashmap_size=19, **kwargs):
    if encoding == 'None':
        return lambda x, **kwargs: x, input_dim
    elif encoding == 'frequency_torch':
        encoder = nn.Identity()
    elif encoding == 'frequency':
        from freqencoder import FreqEncoder
        encoder = FreqEncoder(input_dim=input_dim, degree=multires)
    elif encoding == 'hashgrid':
        from gridencoder import GridEncoder
        encoder = GridEncoder(input_dim=input_dim, num_levels=num_levels, level_dim=level_dim,
                              log2_hashmap_size=log2_hashmap_size, gridtype='hash', align_corners=False)
    return encoder, encoder.output_dim


class NeRFRenderer(nn.Module):
    def run_cuda(self, rays_o, rays_d, bound):
        nears, fars = raymarching.near_far_from_aabb(rays_o, rays_d, self.aabb_train, self.min_near)
        xyzs, dirs, ts, rays = raymarching.march_rays_train(rays_o, rays_d, bound, self.density_bitfield,
                                                            self.cascade, self.grid_size, nears, fars)
        return xyzs
"""

# the same encoders through the project's own copy, imported relatively (DreamWaltz's core/nerf/encoder.py)
TORCH_NGP_RELATIVE = b"""def get_encoder(encoding, input_dim=3, degree=4, **kwargs):
    if encoding == 'sphere_harmonics':
        from .shencoder import SHEncoder
        encoder = SHEncoder(input_dim=input_dim, degree=degree)
    elif encoding == 'hashgrid':
        from .gridencoder import GridEncoder
        encoder = GridEncoder(input_dim=input_dim)
    return encoder
"""

# pytorch3d's Python ray marcher and K-Planes' own `raymarching` package: not torch-ngp's extension
PYTHON_RAYMARCHERS = b"""from pytorch3d.renderer.implicit.raymarching import EmissionAbsorptionRaymarcher
from ..raymarching.raymarching import RayMarcher


def build():
    return EmissionAbsorptionRaymarcher(), RayMarcher()
"""


def test_torch_ngp_extensions():
    found = _found(TORCH_NGP)
    assert {4, 13, 14, 16, 17, 24, 25} <= _lines(TORCH_NGP, "NPU878")
    assert found[(24, "NPU878")] == "kernel"
    assert not {5, 9, 11} & _lines(TORCH_NGP, "NPU878")
    assert {3, 4, 6, 7} <= _lines(TORCH_NGP_RELATIVE, "NPU878")
    assert not _lines(PYTHON_RAYMARCHERS, "NPU878")


# Point Transformer's layers (lib/pointops/functions/pointops.py wraps the CUDAExtension pointops_cuda)
POINTOPS = b"""import torch
import torch.nn as nn

from lib.pointops.functions import pointops


class PointTransformerLayer(nn.Module):
    def forward(self, pxo) -> torch.Tensor:
        p, x, o = pxo
        x_q, x_k, x_v = self.linear_q(x), self.linear_k(x), self.linear_v(x)
        x_k = pointops.queryandgroup(self.nsample, p, p, x_k, None, o, o, use_xyz=True)
        x_v = pointops.queryandgroup(self.nsample, p, p, x_v, None, o, o, use_xyz=False)
        return x_k, x_v
"""


def test_pointops():
    assert _lines(POINTOPS, "NPU878") == {4, 11, 12}


# involution's / SAN's CuPy ops (lead decision 46): each forward / backward binds `f = load_kernel(...)` again, and
# another function's `f` is something else
INVOLUTION = b"""from collections import namedtuple
from string import Template

import cupy
import torch
from torch.autograd import Function

Stream = namedtuple('Stream', ['ptr'])
CUDA_NUM_THREADS = 1024


@cupy._util.memoize(for_each_device=True)
def load_kernel(kernel_name, code, **kwargs):
    code = Template(code).substitute(**kwargs)
    kernel_code = cupy.cuda.compile_with_cache(code)
    return kernel_code.get_function(kernel_name)


def GET_BLOCKS(N):
    return (N + CUDA_NUM_THREADS - 1) // CUDA_NUM_THREADS


class _involution(Function):
    @staticmethod
    def forward(ctx, input, weight):
        output = input.new(input.size())
        n = output.numel()
        with torch.cuda.device_of(input):
            f = load_kernel('involution_forward_kernel', _involution_kernel, Dtype='float', nthreads=n)
            f(block=(CUDA_NUM_THREADS, 1, 1),
              grid=(GET_BLOCKS(n), 1, 1),
              args=[input.data_ptr(), weight.data_ptr(), output.data_ptr()],
              stream=Stream(ptr=torch.cuda.current_stream().cuda_stream))
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_input = grad_weight = None
        with torch.cuda.device_of(input):
            if ctx.needs_input_grad[0]:
                grad_input = input.new(input.size())
                f = load_kernel('involution_backward_grad_input_kernel', _involution_kernel_backward_grad_input)
                f(block=(CUDA_NUM_THREADS, 1, 1), grid=(GET_BLOCKS(grad_input.numel()), 1, 1),
                  args=[grad_output.data_ptr(), weight.data_ptr(), grad_input.data_ptr()])
            if ctx.needs_input_grad[1]:
                grad_weight = weight.new(weight.size())
                f = load_kernel('involution_backward_grad_weight_kernel', _involution_kernel_backward_grad_weight)
                f(block=(CUDA_NUM_THREADS, 1, 1), grid=(GET_BLOCKS(grad_weight.numel()), 1, 1),
                  args=[grad_output.data_ptr(), input.data_ptr(), grad_weight.data_ptr()])
        return grad_input, grad_weight


def apply_all(fs, x):
    for f in fs:
        x = f(x)
    return x


def _pair(x):
    f = lambda v: (v, v)
    return f(x)
"""


def test_involution_launches_in_each_function():
    lines = _lines(INVOLUTION, "NPU374")
    assert {29, 30, 43, 44, 48, 49} <= lines     # each loader call and each launch
    assert not {55, 61} & lines                  # a loop variable, a lambda: other functions' `f`


# the same launch where the loader comes from another module of the code base (capsule layers, spline convolutions,
# BF13 matmul: `from utils import load_kernel`): the file names no CuPy, the launch keywords do
IMPORTED_LOADER = b"""import torch
from torch.autograd import Function

from capsule_layer.utils import load_kernel, Dtype, Stream, CUDA_NUM_THREADS, GET_BLOCKS, capsule_linear_kernels


class CapsuleLinear(Function):
    def forward(self, input, weight):
        with torch.cuda.device_of(input):
            output = input.new(input.size(0), weight.size(0), weight.size(-1))
            n = output.numel()
            f = load_kernel('capsule_linear_forward', capsule_linear_kernels, Dtype=Dtype(input), nthreads=n)
            f(args=[input.data_ptr(), weight.data_ptr(), output.data_ptr()],
              block=(CUDA_NUM_THREADS, 1, 1),
              grid=(GET_BLOCKS(n), 1, 1),
              stream=Stream(ptr=torch.cuda.current_stream().cuda_stream))
        return output


def plot(ax, xs):
    ax.grid(True)
    ax.plot(xs, block=False)
"""


def test_launch_keywords_of_an_imported_loader():
    found = _found(IMPORTED_LOADER)
    assert found[(13, "NPU374")] == "kernel"
    assert _lines(IMPORTED_LOADER, "NPU374") == {13}
