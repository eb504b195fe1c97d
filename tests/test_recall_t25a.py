"""t25a (session 25): CUDA-only GPU libraries reached without an import-resolved name, from the tuned_t25a sample
(TUNED): spikingjelly's CuPy backend chosen by keyword or position, PyCUDA's prepared launches and numba.cuda's
device-array copies on variables, Taichi's CUDA arch. Each test has a control that stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[tuple[int, str], str]:
    return {(f.line, f.code): f.severity for f in ENGINE.analyze_bytes(src, path).findings}


# Spike-Driven-Transformer/module/ms_conv.py (Spikformer's cifar10/model.py is the one-line form)
SPIKE_DRIVEN = b"""import torch.nn as nn
from spikingjelly.clock_driven.neuron import (
    MultiStepParametricLIFNode,
    MultiStepLIFNode,
)


class MS_MLP_Conv(nn.Module):
    def __init__(self, in_features, spike_mode="lif", backend="torch"):
        super().__init__()
        if spike_mode == "lif":
            self.fc1_lif = MultiStepLIFNode(tau=2.0, detach_reset=True, backend="cupy")
        elif spike_mode == "plif":
            self.fc1_lif = MultiStepParametricLIFNode(
                init_tau=2.0, detach_reset=True, backend="cupy"
            )
        self.fc2_lif = MultiStepLIFNode(tau=2.0, detach_reset=True, backend=backend)
"""


def test_spikingjelly_cupy_backend_keyword():
    found = _found(SPIKE_DRIVEN)
    assert found.get((12, "NPU884")) == "error"
    assert (15, "NPU884") in found
    assert not {line for line, code in found if code == "NPU884"} - {12, 15}   # passed through, torch default: quiet


# spikingjelly/activation_based/examples/classify_dvsg.py and conv_fashion_mnist.py
SET_BACKEND = b"""from spikingjelly.activation_based import functional, neuron


def build(net, args):
    functional.set_step_mode(net, "m")
    if args.cupy:
        functional.set_backend(net, "cupy", instance=neuron.LIFNode)
    functional.set_backend(net, "torch")
    functional.set_backend(net, args.backend)
"""


def test_spikingjelly_set_backend_by_position():
    found = _found(SET_BACKEND)
    assert (7, "NPU887") in found
    assert not {line for line, code in found if code == "NPU887"} - {7}


# cuvarbase/cuvarbase/pdm.py and cunfft.py (PyCUDA), aydin/util/fast_uniform_filter/numba_gpu_uf.py (numba.cuda)
PYCUDA_NUMBA = b"""import numpy as np
import pycuda.driver as cuda
from pycuda.compiler import SourceModule
from numba import cuda as ncuda


def pdm_async(stream, data_cpu, data_gpu, pow_cpu, function, dphi=0.05):
    t_g, y_g, w_g, freqs_g, pow_g = data_gpu
    function.prepared_async_call((10, 1), (256, 1, 1), stream,
                                 t_g.ptr, y_g.ptr, w_g.ptr, np.int32(len(t_g)))
    pow_g.get_async(stream=stream, ary=pow_cpu)


def numba_gpu_uniform_filter(image, output, array, cuda_stream=0):
    output.copy_to_host(array, stream=cuda_stream)


def plan(model, x):
    return model.prepare(x).call(x)
"""


def test_pycuda_prepared_launch_and_numba_copy():
    found = _found(PYCUDA_NUMBA)
    assert found.get((9, "NPU885")) == "error"
    assert (15, "NPU885") in found
    assert not {line for line, code in found if code == "NPU885"} - {9, 15}


# difftaichi/examples/smoke_taichi.py and smoke_taichi_cpu.py
TAICHI = b"""import taichi as ti

real = ti.f32
ti.init(default_fp=real, arch=ti.cuda, flatten_if=True)
"""
TAICHI_CPU = b"""import taichi as ti

real = ti.f32
ti.init(default_fp=real, arch=ti.cpu)
"""


def test_taichi_cuda_arch():
    assert _found(TAICHI).get((4, "NPU886")) == "warning"
    assert not {code for _, code in _found(TAICHI_CPU) if code == "NPU886"}
