"""t32c (session 32): misses of the blind static splits test56 and test59 (TUNED): BytePS's PyTorch binding as a
collective library beside NCCL (Espresso's communicators and example scripts) and the CUDA grid-stride macro literal
that CuPy kernel modules prepend to their kernels (involution's and SAN's `CUDA_KERNEL_LOOP`). Each shape comes from
the code it was missed in, with a control that stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# Espresso byteps/torch/mergeComp/communicator/ddp_hipress.py
BPS_COMMUNICATOR = b"""import torch
import byteps.torch as bps


class DDPHiPress(Communicator):
    def __init__(self, compressor, memory, DDPbackend, threshold=1024 * 128 * 8):
        super().__init__(compressor, memory)
        self.allreduce = DDPbackend.global_allreduce
        self.local_rank = bps.local_rank()
        self.local_size = bps.local_size()
        self.world_size = bps.size()

    def synchronize(self, handle):
        if bps.local_rank() == 0:
            return bps.synchronize(handle)
        return self.allreduce(handle)
"""


def test_byteps_torch_import_collectives_and_rank_queries():
    found = _found(BPS_COMMUNICATOR)
    assert ("NPU188", "error") in found[2]                      # the import: BytePS has no HCCL backend
    for line in (9, 10, 11, 14):
        assert ("NPU188", "info") in found[line], line          # rank / size queries (as Horovod's, pd53)
    assert ("NPU188", "error") in found[15]                     # a BytePS collective call
    assert not any(code == "NPU188" for code, _ in found.get(16, set()))   # the code's own allreduce


# Espresso byteps/tensorflow/mergeComp/helper.py: another framework's binding (t18a's reading of Horovod's)
BPS_TENSORFLOW = b"""import byteps.tensorflow as bps


def get_compression(args):
    bps.init()
    return bps.Compression.fp16 if args.fp16 else bps.Compression.none
"""

# a module of the code's own that is named bps
OWN_BPS = b"""from utils import bps

bps.init()
world = bps.size()
"""


def test_byteps_controls_stay_quiet():
    for src in (BPS_TENSORFLOW, OWN_BPS):
        assert not any(code == "NPU188" for codes in _found(src).values() for code, _ in codes)


# involution cls/mmcls/models/utils/involution_cuda.py (SAN's lib/sa/functions/*.py hold the same literal)
CUPY_MACRO = b"""import cupy

CUDA_NUM_THREADS = 1024

kernel_loop = '''
#define CUDA_KERNEL_LOOP(i, n)                        \\\\
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; \\\\
      i < (n);                                       \\\\
      i += blockDim.x * gridDim.x)
'''


def GET_BLOCKS(N):
    return (N + CUDA_NUM_THREADS - 1) // CUDA_NUM_THREADS
"""

# a docstring that explains the indexing in words, and an OpenCL source with a #define
NOT_CUDA = b'''def grid(n):
    """Each thread handles one element: i = blockIdx.x * blockDim.x + threadIdx.x in the CUDA version."""
    return n


OPENCL = """
#define IDX(i) (i)
__kernel void add(__global float* a) { int i = get_global_id(0); a[IDX(i)] += 1; }
"""
'''


def test_cuda_grid_stride_macro_literal():
    found = _found(CUPY_MACRO)
    assert any(code == "NPU399" for code, _ in found.get(5, set())), found
    macro = [f for f in ENGINE.analyze_bytes(CUPY_MACRO, "main.py").findings if f.line == 6]
    assert [f.symbol for f in macro] == ["CUDA_KERNEL_LOOP"]            # the label's line: the macro named there
    assert not any(line > 6 for line in found)


# gpu4pyscf fci/direct_spin1.py: a plain `#define` in a CUDA source is no CUDA macro of its own
RAW_MODULE = b"""import cupy as cp

code = r'''
#define TILE 32
extern "C" {
__global__
void _build_t1(double *ci0, double *t1, long long na)
{
    int tx = threadIdx.x;
    int stra0 = blockIdx.y * blockDim.y;
}
}'''

_module = cp.RawModule(code=code)
"""


def test_plain_define_in_cuda_source_is_not_a_macro_finding():
    found = _found(RAW_MODULE)
    assert any(code == "NPU399" for code, _ in found.get(3, set()))
    assert 4 not in found
    assert not any(code == "NPU399" for codes in _found(NOT_CUDA).values() for code, _ in codes)


# AC-SGD utils/dist_args_utils.py and comm/nccl_backend.py (DT-FM's are the same)
CUPY_NCCL_BACKEND = b"""def add_torch_distributed_arguments(parser):
    parser.add_argument('--dist-backend', type=str, default='cupy_nccl', metavar='S',
                        help='backend type for distributed PyTorch (default: cupy_nccl)')
    parser.add_argument('--dist-url', type=str, default='tcp://127.0.0.1:9000', metavar='S')


def init_communicators(args):
    if args.dist_backend == 'cupy_nccl':
        return _init_communicators_cupy(args)
    return _init_gloo(args)
"""


def test_cupy_nccl_backend_name():
    found = _found(CUPY_NCCL_BACKEND)
    assert ("NPU101", "error") in found[2] and ("NPU101", "error") in found[8]
    assert 3 not in found and 4 not in found and 9 not in found   # the help text, the URL, the branch's call


def test_cupy_nccl_is_not_rewritten():
    result = ENGINE.analyze_bytes(CUPY_NCCL_BACKEND, "main.py")
    assert all(f.fix != "safe" for f in result.findings if f.symbol == "cupy_nccl")


def test_byteps_own_tree_is_first_party():
    from auditor.static.firstparty import PACKAGE_RULES

    assert "byteps-distributed" in PACKAGE_RULES        # auditing BytePS's own repository: its package is the project


# a world-size flag read later: the BytePS call is the change, not the branch (as Horovod's, t18a)
BPS_FLAG = b"""import byteps.torch as bps

bps.init()
is_distributed = bps.size() > 1
if is_distributed:
    print("distributed")
"""


def test_byteps_flag_reads_stay_quiet():
    found = _found(BPS_FLAG)
    assert 4 in found and 5 not in found
