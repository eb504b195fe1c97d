"""Families found while tuning on test11 and test12 after their blind runs (t14o, issue 14, session 10; both
splits are tuned on from this change): Lightning's CUDA accelerator class, flash-linear-attention (fla), the
switches and macros of CUDAExtension setup.py files (PyG extension family), NVIDIA ALCHEMI ops. The code is written
in the shape of real projects (a Lightning accelerator helper, a linear-attention layer with a torch fallback, an
extension setup.py, a neighbour-list backend choice), not copied from the splits; near misses stay quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import findings_by_line

ENGINE = StaticEngine(load_rules())


def _codes(by_line: dict[int, list], line: int) -> set[str]:
    return {f.code for f in by_line.get(line, [])}


LIGHTNING = '''\
import torch
from lightning.pytorch.accelerators import Accelerator, CUDAAccelerator, MPSAccelerator


def default_precision(trainer):
    if isinstance(trainer.accelerator, (CUDAAccelerator, MPSAccelerator)):
        return "16-mixed"
    return "32-true"


def pick_devices():
    if CUDAAccelerator.is_available():
        return torch.cuda.device_count()
    return 1


class SimAccelerator(Accelerator):
    def setup_device(self, device):
        self.device = device
'''


def test_lightning_cuda_accelerator_checks_are_device_errors():
    by_line = findings_by_line(ENGINE, LIGHTNING)
    for line in (6, 12):
        found = [f for f in by_line[line] if f.code == "NPU079"]
        assert found, line
        assert found[0].category == "device" and found[0].severity == "error"
    assert "NPU079" not in _codes(by_line, 17)      # the project's own Accelerator subclass


FLA = '''\
import torch

try:
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
except ImportError:
    chunk_gated_delta_rule = None


def torch_gated_delta(q, k, v, g, beta):
    return q * k.sum(-1, keepdim=True) + v


class GatedDeltaNet(torch.nn.Module):
    def forward(self, q, k, v, g, beta):
        if chunk_gated_delta_rule is not None and q.is_cuda:
            out, _ = chunk_gated_delta_rule(q, k, v, g=g, beta=beta)
            return out
        return torch_gated_delta(q, k, v, g, beta)


flash = None
fla_layers = ["gdn", "kda"]
'''


def test_fla_import_and_call_are_attention_findings():
    by_line = findings_by_line(ENGINE, FLA)
    imp = [f for f in by_line[4] if f.code == "NPU309"]
    call = [f for f in by_line[16] if f.code == "NPU309"]
    assert imp and call
    assert imp[0].category == "attention"
    assert "NPU309" not in _codes(by_line, 10)       # the torch fallback
    assert 21 not in by_line and 22 not in by_line  # names that only look like it


SETUP = '''\
import os
import glob
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

suffices = ['cpu', 'cuda'] if CUDA_HOME is not None else ['cpu']
if os.getenv('FORCE_CUDA', '0') == '1':
    suffices = ['cuda', 'cpu']
if os.getenv('FORCE_ONLY_CUDA', '0') == '1':
    suffices = ['cuda']
if os.getenv('FORCE_ONLY_CPU', '0') == '1':
    suffices = ['cpu']


def get_extensions():
    extensions = []
    for suffix in suffices:
        define_macros = [('WITH_PYTHON', None)]
        extra_compile_args = {'cxx': ['-O3']}
        if suffix == 'cuda':
            define_macros += [('WITH_CUDA', None)]
        Extension = CUDAExtension if suffix == 'cuda' else CppExtension
        sources = glob.glob('csrc/*.cpp')
        extensions.append(Extension(f'ops_{suffix}', sources, define_macros=define_macros,
                                    extra_compile_args=extra_compile_args))
    return extensions


setup(name='ops', ext_modules=get_extensions(), cmdclass={'build_ext': BuildExtension})
'''


def test_cuda_extension_setup_switches_are_kernel_findings():
    by_line = findings_by_line(ENGINE, SETUP, "setup.py")
    for line in (7, 9):       # FORCE_CUDA / FORCE_ONLY_CUDA read
        assert any(f.code == "NPU367" and f.category == "kernel" for f in by_line[line]), line
    macro = [f for f in by_line[21] if f.code == "NPU311"]
    assert macro and macro[0].category == "kernel" and macro[0].severity == "warning"
    assert "NPU367" not in _codes(by_line, 11)      # the CPU-only switch
    assert "NPU311" not in _codes(by_line, 18)      # other macros


def test_cmake_cuda_architectures_and_cutlass_root_reads():
    src = '''\
    import os
    from pathlib import Path


    def cutlass_include_dirs():
        root = os.getenv("MYPROJ_CUTLASS_ROOT") or os.getenv("CUTLASS_ROOT")
        return [Path(root) / "include"] if root else []


    def cmake_args():
        archs = os.getenv("CMAKE_CUDA_ARCHITECTURES") or os.getenv("CUDAARCHS")
        return [f"-DCMAKE_CUDA_ARCHITECTURES={archs}"] if archs else []


    def cache_dir():
        return os.getenv("XDG_CACHE_HOME", "~/.cache")
    '''
    by_line = findings_by_line(ENGINE, src, "build_ext.py")
    assert "NPU367" in _codes(by_line, 6)
    assert "NPU367" in _codes(by_line, 11)
    assert 16 not in by_line


NL = '''\
import torch

try:
    from nvalchemiops.neighborlist import batch_cell_list
except ImportError:
    batch_cell_list = None


def neighbour_list(pos, cell, cutoff, batch):
    if batch_cell_list is not None and pos.is_cuda:
        return batch_cell_list(pos, cutoff, cell, batch)
    return torch.cdist(pos, pos) < cutoff
'''


def test_nvalchemiops_import_and_call_are_third_party():
    by_line = findings_by_line(ENGINE, NL)
    imp = [f for f in by_line[4] if f.code == "NPU423"]
    assert imp and imp[0].category == "third_party"
    assert "NPU423" in _codes(by_line, 11)
    assert "NPU423" not in _codes(by_line, 12)
