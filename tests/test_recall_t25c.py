"""t25c (session 25): misses of the blind static split test36 (TUNED): sparse-convolution and Lie-group libraries built
from source (MinkowskiEngine, torchsparse, lietorch: kernel, lead decisions 5 and 13), an autocast alias bound in a
module-level `if` on the torch release (DROID-SLAM's `@autocast(enabled=True)` decorators), imports of a CUDA
extension a setup.py of the tree builds (FastPointTransformer's `import cuda_sparse_ops`), and relative imports in a
folder without `__init__.py` (DirectVoxGO's `from .dvgo import render_utils_cuda`). Each test has a control."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    out: dict[int, set[tuple[str, str]]] = {}
    for f in ENGINE.analyze_bytes(src, path).findings:
        out.setdefault(f.line, set()).add((f.code, f.category))
    return out


# LargeKernel3D semantic-segmentation/util/minkows_util.py and FastPointTransformer eval.py, abridged
MINKOWSKI = b"""import torch
import MinkowskiEngine as ME
import spconv.pytorch as spconv


def quantize(coords, feats):
    inds, inverse_map = ME.utils.sparse_quantize(coords, return_index=True, return_inverse=True)
    x = ME.SparseTensor(feats[inds], coords[inds], device=feats.device)
    return x, spconv.SubMConv3d(16, 16, 3)
"""


def test_minkowski_engine_is_kernel_and_spconv_third_party():
    found = _found(MINKOWSKI)
    for line in (2, 7, 8):
        assert ("NPU878", "kernel") in found[line]
        assert not any(cat == "third_party" for _, cat in found[line])
    assert ("NPU416", "third_party") in found[3]                 # spconv: CUDA wheels on PyPI, decision 13
    assert ("NPU416", "third_party") in found[9]


# DROID-SLAM droid_slam/trajectory_filler.py (lietorch from thirdparty/lietorch) and DPVO's vendored copy
LIETORCH = b"""import torch
import lietorch
from lietorch import SE3


def fill(poses, w):
    Ps = SE3(poses)
    Gs = SE3.exp(w) * Ps[0]
    return lietorch.cat([Gs, Ps], 0)
"""

VENDORED = b"""from . import lietorch
from .lietorch import SE3


def identity(poses):
    return SE3.IdentityLike(SE3(poses))
"""


def test_lietorch_imports_and_calls_are_kernel():
    found = _found(LIETORCH, "droid_slam/trajectory_filler.py")
    assert {line for line, hits in found.items() if ("NPU878", "kernel") in hits} == {2, 3, 7, 8, 9}
    assert not _found(VENDORED, "dpvo/net.py")       # the project's own package, imported relatively


# DROID-SLAM droid_slam/motion_filter.py, abridged
VERSION_GATED = b"""import torch
from functools import partial

if torch.__version__.startswith("2"):
    autocast = partial(torch.autocast, device_type="cuda")
else:
    autocast = torch.cuda.amp.autocast


class MotionFilter:
    @autocast(enabled=True)
    def feature_encoder(self, image):
        return self.fnet(image).squeeze(0)
"""

# a module-level `if` on a device may hold the NPU branch: it binds no alias
DEVICE_GATED = b"""import torch

if torch.cuda.is_available():
    amp = torch.cuda.amp
else:
    amp = torch.cpu.amp


class MotionFilter:
    @amp.autocast(enabled=True)
    def feature_encoder(self, image):
        return self.fnet(image).squeeze(0)
"""


def test_autocast_alias_bound_under_a_release_check():
    found = _found(VERSION_GATED, "droid_slam/motion_filter.py")
    assert ("NPU204", "precision") in found[11]
    assert 11 not in _found(DEVICE_GATED, "droid_slam/motion_filter.py")


# FastPointTransformer src/cuda_ops/setup.py and src/cuda_ops/functions/sparse_ops.py, abridged
SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='cuda_sparse_ops',
    ext_modules=[
        CUDAExtension('cuda_sparse_ops', [
            'src/cuda_ops_api.cpp',
            'src/dot_product/dot_product_kernel.cu',
        ])
    ],
    cmdclass={'build_ext': BuildExtension})
"""

SPARSE_OPS = """import torch
from torch.autograd import Function

import cuda_sparse_ops
import sparse_utils


class DotProduct(Function):
    @staticmethod
    def forward(ctx, query, pos_enc, out_F, kq_map):
        cuda_sparse_ops.dot_product_forward(ctx.m, ctx.h, query, pos_enc, out_F, kq_map)
        return sparse_utils.pad(out_F)
"""

# DirectVoxGO lib/dvgo.py and lib/dbvgo.py (lib/ has no __init__.py), abridged
DVGO = """import os
from torch.utils.cpp_extension import load

parent_dir = os.path.dirname(os.path.abspath(__file__))
render_utils_cuda = load(
        name='render_utils_cuda',
        sources=[os.path.join(parent_dir, path) for path in ['cuda/render_utils.cpp', 'cuda/render_utils_kernel.cu']])


def total_variation(v):
    return v.abs().mean()
"""

DBVGO = """import torch
from .dvgo import render_utils_cuda, total_variation


def sample_ray(rays_o, rays_d, near, far):
    ray_pts, mask = render_utils_cuda.sample_pts_on_rays(rays_o, rays_d, near, far)
    return ray_pts, total_variation(ray_pts)
"""


def _cross_lines(root: Path, codes: tuple[str, ...] = ("NPU320",)) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            if f.code in codes:
                out.setdefault(r.path, set()).add(f.line)
    return out


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_imports_of_an_extension_the_tree_builds(tmp_path):
    root = tmp_path / "fpt"
    _write(root, {"src/cuda_ops/setup.py": SETUP, "src/cuda_ops/functions/sparse_ops.py": SPARSE_OPS,
                  "src/cuda_ops/functions/sparse_utils.py": "def pad(x):\n    return x\n"})
    # the import and the call, not sparse_utils (t26a: NPU891 reads `cuda_sparse_ops` by its name at warning, and the
    # cross-file info NPU320 leaves a line that already has a kernel finding)
    found = _cross_lines(root, ("NPU320", "NPU891"))
    assert found["src/cuda_ops/functions/sparse_ops.py"] == {4, 11}
    control = tmp_path / "nobuild"      # the same module without the setup.py that builds it: unknown, quiet
    _write(control, {"src/cuda_ops/functions/sparse_ops.py": SPARSE_OPS})
    assert "src/cuda_ops/functions/sparse_ops.py" not in _cross_lines(control)


def test_relative_import_in_a_namespace_folder(tmp_path):
    root = tmp_path / "dvgo"
    _write(root, {"lib/dvgo.py": DVGO, "lib/dbvgo.py": DBVGO})
    # the import and the call; `total_variation` is plain torch (t31b: NPU379 reads a relative `*_cuda` name used as
    # a module by its name, and the cross-file info NPU320 leaves a line that already has a kernel finding)
    found = _cross_lines(root, ("NPU320", "NPU379"))
    assert found["lib/dbvgo.py"] == {2, 6}
    # the same import from another folder names no sibling file there
    other = tmp_path / "other"
    _write(other, {"lib/dvgo.py": DVGO, "tools/dbvgo.py": DBVGO})
    assert "tools/dbvgo.py" not in _cross_lines(other)
