"""t14q (issue 14, session 11, tuned on static test13): packages imported by a name in a string. A lazy importer's
`triton = OptionalImport("triton")`, `cuml = importlib.import_module("cuml")` or MONAI's `cupy, has_cp =
optional_import("cupy")` stands for the module like an `import` statement: the line itself is the import, and the
uses below (`@triton.jit`, `cuml.neighbors.NearestNeighbors(...)`) resolve through it."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def findings(src: str, name: str = "ops.py"):
    return snippet_findings(ENGINE, src, name)


def by_line(src: str, name: str = "ops.py") -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in findings(src, name):
        out.setdefault(f.line, set()).add(f.category)
    return out


LAZY_TRITON = '''\
import torch

from mylib.core.version_check import OptionalImport

triton = OptionalImport("triton")
tl = OptionalImport("triton.language")


def _configs():
    return [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in (2, 4)]


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 128),)
    _scale_kernel[grid](x, out, x.numel(), BLOCK=128)
    return out
'''


def test_lazy_triton_import_is_the_import_and_its_uses_resolve():
    lines = by_line(LAZY_TRITON)
    assert lines.get(5) == {"kernel"}          # triton = OptionalImport("triton")
    assert lines.get(6) == {"kernel"}          # tl = OptionalImport("triton.language")
    assert "kernel" in lines.get(10, set())    # triton.Config(...)
    assert lines.get(13) == {"kernel"}         # @triton.jit
    assert lines.get(24) == {"kernel"}         # _scale_kernel[grid](...)


RAPIDS_KNN = '''\
import importlib

import torch

from mylib.core.version_check import check_version_spec

CUML_AVAILABLE = check_version_spec("cuml", "26.2.0", hard_fail=False)

if CUML_AVAILABLE:
    cuml = importlib.import_module("cuml")


def knn(points: torch.Tensor, queries: torch.Tensor, k: int):
    model = cuml.neighbors.NearestNeighbors(n_neighbors=k)
    model.fit(points)
    return model.kneighbors(queries)
'''


def test_import_module_by_literal_name_binds_the_package():
    lines = by_line(RAPIDS_KNN)
    assert lines.get(7) == {"third_party"}     # check_version_spec("cuml", ...): a package probe
    assert lines.get(10) == {"third_party"}    # cuml = importlib.import_module("cuml")
    assert lines.get(14) == {"third_party"}    # cuml.neighbors.NearestNeighbors(...)


PLUGINS = '''\
import importlib

from mylib.core.version_check import OptionalImport, check_version_spec

yaml = OptionalImport("yaml")
SCIPY_AVAILABLE = check_version_spec("scipy", "1.10.0", hard_fail=False)


def load_plugin(name: str):
    module = importlib.import_module(name)
    backend = importlib.import_module("mylib.backends.cpu")
    return module, backend, yaml.safe_load("a: 1")
'''


def test_host_packages_and_computed_names_stay_quiet():
    assert findings(PLUGINS) == []


JIT_BUILD = '''\
import os

from torch.utils import cpp_extension


class ExtensionBuilder:
    def __init__(self, name, sources, build_directory=None, verbose=False):
        worker_name = "%s_%d" % (name, os.getpid())
        self.build_directory = build_directory or cpp_extension._get_build_directory(worker_name, verbose)
        self.sources = sources

    def flags(self):
        extra_cflags = ["-Ofast", "-DNDEBUG"]
        if any(path.endswith(".cu") for path in self.sources):
            extra_cflags.append("-DCUDA_OP")
        return extra_cflags


def build_root():
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root is None:
        root = cpp_extension.get_default_build_root()
    baton = cpp_extension.FileBaton(os.path.join(root, "lock"))
    return root, baton
'''


def test_jit_extension_build_machinery_and_cuda_defines():
    lines = by_line(JIT_BUILD)
    assert lines.get(9) is None           # _get_build_directory(...): Ascend trees clear build locks with it
    assert lines.get(13) is None          # plain host flags
    assert lines.get(15) == {"kernel"}    # extra_cflags.append("-DCUDA_OP")
    assert lines.get(20) is None          # TORCH_EXTENSIONS_DIR: any extension's build root (multi-backend trees)
    assert lines.get(22) == {"kernel"}    # get_default_build_root()
    assert lines.get(23) == {"kernel"}    # FileBaton(...)
    severities = {f.line: f.severity for f in findings(JIT_BUILD)}
    assert severities[22] == severities[23] == "info" and severities[15] == "error"


RUNTIME_SETUP = '''\
import ctypes
import importlib
import logging
import os
from dataclasses import dataclass

import torch

logger = logging.getLogger(__name__)

_is_apex_available = False
if torch.cuda.is_available():
    try:
        apex_gn_module = importlib.import_module("apex.contrib.group_norm")
        ApexGroupNorm = getattr(apex_gn_module, "GroupNorm")
        _is_apex_available = True
    except ImportError:
        pass


def group_norm(num_channels, use_apex_gn=False):
    if use_apex_gn:
        return ApexGroupNorm(num_groups=32, num_channels=num_channels, eps=1e-5, affine=True)
    return torch.nn.GroupNorm(32, num_channels)


def set_determinism(seed):
    torch.manual_seed(seed)
    os.environ["TF_CUDNN_DETERMINISTIC"] = "1"


def increase_l2_fetch_granularity():
    lib = ctypes.CDLL("libcudart.so")
    lib.cudaDeviceSetLimit(ctypes.c_int(0x05), ctypes.c_int(128))


@dataclass
class MetaData:
    name: str = "Darcy2D"
    cuda_graphs: bool = True
    amp_cpu: bool = False


def log_memory():
    logger.warning("max GPU memory: %.1f MiB" % (torch.cuda.max_memory_allocated() / 1e6))
    logger.info("epoch %d done" % 3)
'''


def test_runtime_setup_families():
    lines = by_line(RUNTIME_SETUP)
    assert lines.get(23) == {"apex"}              # ApexGroupNorm(...) taken with getattr from the imported module
    assert lines.get(29) == {"device"}            # TF_CUDNN_DETERMINISTIC
    assert lines.get(34) == {"device"}            # libcudart's cudaDeviceSetLimit
    assert lines.get(40) == {"device"}            # cuda_graphs: bool = True
    assert lines.get(41) is None                  # amp_cpu: bool = False
    assert lines.get(45) == {"device"}            # torch.cuda.* inside a %-formatted log message
    assert lines.get(46) is None                  # a %-formatted message with no code in it


DUAL_BACKEND_EXT = '''\
import os

import torch
from torch import autograd

from mylib import utils

path = os.path.join(os.path.dirname(__file__), "extension")
spmm = utils.load_extension("spmm", [os.path.join(path, "spmm.cpp"), os.path.join(path, "spmm.cu")])


class SPMMAddMulFunction(autograd.Function):

    @staticmethod
    def forward(ctx, sparse, input):
        if input.device.type == "cuda":
            forward = spmm.spmm_add_mul_forward_cuda
        else:
            forward = spmm.spmm_add_mul_forward_cpu
        return forward(sparse, input)


def evaluate(model, batch, device):
    batch = utils.cuda(batch, device=device)
    for row in range(model.rowCount()):
        item = model.item(row)
        item.setEnabled(True)
    return batch


def mesh_apex(own, fv):
    apex = own[~torch.isin(own, fv)][0]
    return apex
'''


def test_false_positive_families():
    lines = by_line(DUAL_BACKEND_EXT)
    assert lines.get(19) is None    # the extension's CPU variant (`..._cpu`) is no use to port
    assert lines.get(24) is None    # utils.cuda(...): a function of an imported module, not Tensor.cuda()
    assert lines.get(26) is None    # a Qt model's item(row), not Tensor.item()
    assert lines.get(32) is None    # `apex`: a mesh vertex picked by index, not an apex flag
    assert lines.get(16) == {"device"}


def test_tensor_item_and_cuda_still_found():
    src = '''\
    import torch

    def train(model, loader):
        model = model.cuda()
        for batch in loader:
            loss = model(batch.cuda())
            print(loss.item())
    '''
    lines = by_line(src)
    assert lines.get(4) == {"device"} and lines.get(6) == {"device"}
    assert "performance" in lines.get(7, set())


def test_import_module_inside_a_function_binds_only_there():
    src = '''\
    import importlib


    def test_domain_sizes():
        envs = importlib.import_module("mylib.utils.envs")
        assert envs.get_domain_size(4) == (1, 4)


    def make_knn(k):
        cuml = importlib.import_module("cuml")
        return cuml.neighbors.NearestNeighbors(n_neighbors=k)
    '''
    lines = by_line(src)
    assert lines.get(5) is None and lines.get(6) is None
    assert lines.get(10) == {"third_party"}     # the import itself is still reported where it happens
