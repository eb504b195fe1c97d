"""t23d (session 23): misses of test27 / test28 (TUNED): calls on the communicator CuPy's NCCL binding returns (DT-FM's
`comm/nccl_backend.py`) and the build lines that use an NCCL location variable (torch_cgx's setup.py)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# DT-FM / CocktailSGD comm/nccl_backend.py, abridged
CUPY_COMM = b"""import torch
import numpy as np
import cupy
import torch.distributed as dist


class NCCLCommunicator:
    def __init__(self, comm_rank, cuda_id, comm_group_size, comm_name):
        self.comm_rank = comm_rank
        cupy.cuda.Device(cuda_id).use()
        self.dist_store = dist.distributed_c10d._get_default_store()
        cuda_id_str = self.dist_store.get('group-' + comm_name + '-unique-id')
        comm_id = tuple(np.frombuffer(cuda_id_str, dtype=int))
        self.comm = cupy.cuda.nccl.NcclCommunicator(comm_group_size, comm_id, comm_rank)

    def send(self, tensor, dst, stream=cupy.cuda.Stream.null):
        self.comm.send(
            tensor.data_ptr(),
            torch.numel(tensor),
            cupy.cuda.nccl.NCCL_FLOAT32,
            dst,
            stream.ptr
        )

    def all_reduce(self, tensor, stream=cupy.cuda.Stream.null):
        self.comm.allReduce(tensor.data_ptr(), tensor.data_ptr(), torch.numel(tensor),
                            cupy.cuda.nccl.NCCL_FLOAT32, cupy.cuda.nccl.NCCL_SUM, stream.ptr)

    def store_get(self, key):
        return self.dist_store.get(key)
"""

# the same shape through `from cupy.cuda import nccl` and a local name
CUPY_LOCAL = b"""from cupy.cuda import nccl

def make(world, uid, rank, ptr, n, stream):
    comm = nccl.NcclCommunicator(world, uid, rank)
    comm.bcast(ptr, n, nccl.NCCL_FLOAT32, 0, stream)
    return comm
"""

# control: horovod's optimizer wrapper (a distributed namespace rule that is no NCCL binding): `optimizer.step()`
# is the training step, reported through the wrapper's own line only
HOROVOD = b"""import horovod.torch as hvd

class Trainer:
    def __init__(self, model, optimizer):
        self.optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
"""


def test_calls_on_a_cupy_nccl_communicator_are_nccl_calls():
    assert _lines(CUPY_COMM, "NPU132") == [14, 17, 20, 26, 27]
    assert 29 not in _lines(CUPY_COMM, "NPU132")         # the torch store's `get` is no NCCL call
    assert _lines(CUPY_LOCAL, "NPU132") == [1, 4, 5]


def test_a_horovod_optimizer_is_not_followed_as_an_nccl_binding():
    findings = ENGINE.analyze_bytes(HOROVOD, "train.py").findings
    assert not [f for f in findings if f.line in (8, 10) and f.category == "distributed"]


# torch_cgx setup.py, abridged
CGX_SETUP = b"""import os
from setuptools import setup
from torch.utils import cpp_extension

MPI_HOME = os.environ.get("MPI_HOME", "/usr/local/mpi")
NCCL_HOME = os.environ.get("NCCL_HOME", "/usr/local/nccl")
NCCL_INCLUDE = os.environ.get("NCCL_INCLUDE", "/usr/local/nccl/include")
NCCL_LIB = os.environ.get("NCCL_LIB", "/usr/local/nccl/lib")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
NCCL_DEBUG = os.environ.get("NCCL_DEBUG", "WARN")
link_args = ['-L' + os.path.join(MPI_HOME, 'lib'), '-lmpi']
include_dirs = [os.path.join(MPI_HOME, "include"), os.path.join(CUDA_HOME, "include")]

if os.path.isdir(NCCL_HOME):
    include_dirs.append(os.path.join(NCCL_HOME, "include"))
    link_args.append('-L' + os.path.join(NCCL_HOME, 'lib'))
    link_args.append('-lnccl')
elif os.path.isdir(NCCL_INCLUDE) and os.path.isdir(NCCL_LIB):
    include_dirs.append(os.path.join(NCCL_INCLUDE))
    link_args.append('-L' + os.path.join(NCCL_LIB))
    link_args.append('-lnccl')
print("NCCL debug level", NCCL_DEBUG)
"""


def test_build_lines_using_an_nccl_location_variable():
    assert _lines(CGX_SETUP, "NPU141", "setup.py") == [14, 15, 16, 18, 19, 20]
    # controls: MPI_HOME / CUDA_HOME lines (12), NCCL_DEBUG (a setting, not a location: 22)
    assert _lines(CGX_SETUP, "NPU136", "setup.py") == [17, 21]


# PyTorch-Encoding encoding/functions/encoding.py, abridged: the package's own CUDA extension (setup.py builds
# `encoding.gpu` from lib/gpu/*.cu), imported only when CUDA is present
ENCODING = b"""import torch
from torch.autograd import Function

from encoding import cpu
if torch.cuda.device_count() > 0:
    from encoding import gpu


class _aggregate(Function):
    @staticmethod
    def forward(ctx, A, X, C):
        ctx.save_for_backward(A, X, C)
        if A.is_cuda:
            E = gpu.aggregate_forward(A, X, C)
        else:
            E = cpu.aggregate_forward(A, X, C)
        return E
"""

# control: a dispatch with a CPU twin in the `else` binds nothing
DISPATCH = b"""import torch

if torch.cuda.is_available():
    from mypkg.ops import fused_op
else:
    from mypkg.ops_cpu import fused_op


def run(x):
    return fused_op(x)
"""


def test_an_own_module_imported_only_under_a_cuda_check_is_cuda_code():
    assert _lines(ENCODING, "NPU320", "encoding/functions/encoding.py") == [6, 14]
    assert _lines(DISPATCH, "NPU320", "mypkg/layer.py") == []


def test_an_import_of_the_package_is_not_the_file_of_the_same_stem(tmp_path):
    """The recall bench audits a sampled file without its package's `__init__.py`: `encoding/functions/encoding.py`
    is then a module named `encoding`, and `from encoding import gpu` must not read as an import of itself."""
    from auditor.runner import run_static

    path = tmp_path / "proj" / "encoding" / "functions" / "encoding.py"
    path.parent.mkdir(parents=True)
    path.write_bytes(ENCODING)
    run = run_static([tmp_path / "proj"], jobs=1)
    lines = sorted(f.line for r in run.results for f in r.findings if f.code == "NPU320")
    assert lines == [6, 14]
