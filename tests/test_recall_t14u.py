"""t14u (issue 14, pooled misses of every earlier split): the families fixed, on code written for these tests in the
shapes real code bases use (a CUDA-extension package's setup.py built from the Dao-AILab template, a point-cloud
library's nearest-neighbour search through cuML and CuPy with a CuPy kernel beside it), with the lines each must find
and the lines it must leave alone."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import categories_at as _categories, codes_at as _codes, finding_keys_by_line

ENGINE = StaticEngine(load_rules())


def _findings(code: str, rel: str = "pkg/mod.py") -> dict[int, set[tuple[str, str, str]]]:
    return finding_keys_by_line(ENGINE, code, rel)


SETUP_PY = '''\
import os
import sys
from pathlib import Path

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

PACKAGE_NAME = "depthwise_conv1d"
this_dir = os.path.dirname(os.path.abspath(__file__))

# FORCE_BUILD: build from source even when a prebuilt wheel matches
FORCE_BUILD = os.getenv("DEPTHWISE_CONV1D_FORCE_BUILD", "FALSE") == "TRUE"
SKIP_CUDA_BUILD = os.getenv("DEPTHWISE_CONV1D_SKIP_CUDA_BUILD", "FALSE") == "TRUE"
SKIP_DOCS = os.getenv("DEPTHWISE_CONV1D_SKIP_DOCS", "FALSE") == "TRUE"

ext_modules = []
if not SKIP_CUDA_BUILD:
    print("building the CUDA kernels; set DEPTHWISE_CONV1D_SKIP_CUDA_BUILD=TRUE to skip them")
    ext_modules.append(
        CUDAExtension(
            name="depthwise_conv1d_cuda",
            sources=["csrc/conv1d.cpp", "csrc/conv1d_fwd.cu"],
        )
    )

setup(
    name=PACKAGE_NAME,
    packages=find_packages(exclude=("csrc", "tests")),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
)
'''


def test_skip_cuda_build_switch_is_also_a_kernel_build_finding():
    found = _findings(SETUP_PY, "setup.py")
    # the switch's read and the flag's test: the device finding stays, the kernel build finding stands beside it
    assert "NPU367" in _codes(found, 13) and {"device", "kernel"} <= _categories(found, 13)
    assert "NPU367" in _codes(found, 17) and {"device", "kernel"} <= _categories(found, 17)
    # other switches of the same package, the message naming the variable and the comment: no kernel build finding
    assert "NPU367" not in _codes(found, 12)
    assert "NPU367" not in _codes(found, 14)
    assert "NPU367" not in _codes(found, 18)
    assert not found.get(11)


KNN_CUPY = '''\
import importlib

import torch

from .utils import check_version_spec

CUPY_AVAILABLE = check_version_spec("cupy", "13.6.0", hard_fail=False)


def knn_gpu(points: torch.Tensor, queries: torch.Tensor, k: int):
    cp = importlib.import_module("cupy")
    neighbors = importlib.import_module("cuml.neighbors")
    points = cp.from_dlpack(points)
    queries = cp.from_dlpack(queries)
    model = neighbors.NearestNeighbors(n_neighbors=k)
    model.fit(points)
    distance, index = model.kneighbors(queries)
    return torch.from_dlpack(distance), torch.from_dlpack(index)


_pairwise = None


def pairwise_kernel():
    global _pairwise
    import cupy
    if _pairwise is None:
        _pairwise = cupy.ElementwiseKernel(
            "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    return _pairwise
'''


def test_cupy_arrays_are_third_party_and_its_kernel_builders_kernel():
    found = _findings(KNN_CUPY)
    assert _categories(found, 7) == {"third_party"}          # check_version_spec("cupy", ...)
    assert "third_party" in _categories(found, 11)           # importlib.import_module("cupy")
    assert "kernel" not in _categories(found, 11)
    assert _categories(found, 13) == {"third_party"}         # cp.from_dlpack(points)
    assert _categories(found, 14) == {"third_party"}
    assert _categories(found, 26) == {"third_party"}         # import cupy
    assert "NPU374" in _codes(found, 28) and "kernel" in _categories(found, 28)   # cupy.ElementwiseKernel(
    # torch's own DLPack exchange is not CuPy
    assert "NPU414" not in _codes(found, 18)
