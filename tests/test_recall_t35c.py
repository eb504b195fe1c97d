"""t35c (session 34): misses left on the public static splits test42..test59 (TUNED on test56): the
`spatial_correlation_sampler` CUDA extension (Pytorch-Correlation-extension, imported by PWC-Net-style optical-flow
code), and imports of a CUDA extension a setup.py of the tree builds under a condition, its name folded from a
constant (L3C's `torchac_backend_gpu`). Each shape comes from the code it was missed in, with the nearest controls."""
from __future__ import annotations

from auditor.project.setup_py import built_cuda_extensions, cuda_extension_names
from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, line_of, lines_with_code, write_tree

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# ClementPinard/Pytorch-Correlation-extension benchmark.py: the extension's sampler built and timed
CORRELATION_BENCHMARK = b"""import argparse
import time

import torch
from spatial_correlation_sampler import SpatialCorrelationSampler
from tqdm import trange

parser = argparse.ArgumentParser()
parser.add_argument('backend', choices=['cpu', 'cuda'], default='cuda')
parser.add_argument('-k', '--kernel-size', type=int, default=3)


def main(args):
    \"\"\"Time SpatialCorrelationSampler (the spatial_correlation_sampler CUDA kernels).\"\"\"
    device = torch.device(args.backend)
    input1 = torch.randn(4, 64, 32, 32, device=device, requires_grad=True)
    input2 = torch.randn_like(input1)
    # Force CUDA initialization of the spatial_correlation_sampler backend
    correlation_sampler = SpatialCorrelationSampler(
        args.kernel_size,
        9,
        1)
    start = time.time()
    output = correlation_sampler(input1, input2)
    print('SpatialCorrelationSampler forward: {:.3f} s'.format(time.time() - start))
    return output
"""


def test_spatial_correlation_sampler_import_and_construction_are_kernel_errors():
    found = _found(CORRELATION_BENCHMARK)
    for text in ("from spatial_correlation_sampler import", "correlation_sampler = SpatialCorrelationSampler("):
        assert ("NPU878", "error") in found.get(line_of(CORRELATION_BENCHMARK, text), set()), text
    for text in ('"""Time SpatialCorrelationSampler', "# Force CUDA initialization", "print('SpatialCorrelationSampler"):
        assert not any(code == "NPU878" for code, _ in found.get(line_of(CORRELATION_BENCHMARK, text), set())), text


# ptlflow models/pwcnet/pwcnet.py: the extension when installed, a pure-PyTorch sampler otherwise
PWCNET = b"""try:
    from spatial_correlation_sampler import SpatialCorrelationSampler
except ModuleNotFoundError:
    from ptlflow.utils.correlation import (
        IterSpatialCorrelationSampler as SpatialCorrelationSampler,
    )
import torch.nn as nn


class PWCNet(nn.Module):
    def __init__(self, md=4):
        super().__init__()
        self.corr = SpatialCorrelationSampler(kernel_size=1, patch_size=2 * md + 1, padding=0)
"""


def test_spatial_correlation_sampler_with_a_python_fallback_is_a_warning():
    found = _found(PWCNET)
    for text in ("from spatial_correlation_sampler import", "self.corr = SpatialCorrelationSampler("):
        assert ("NPU878", "warning") in found.get(line_of(PWCNET, text), set()), text
    assert not found.get(line_of(PWCNET, "IterSpatialCorrelationSampler as"))


# the project's own Python correlation layer named like the extension's class, and the backend module itself
OWN_CORRELATION = b"""from .correlation import SpatialCorrelationSampler
from models.correlation_package.correlation import Correlation

corr = SpatialCorrelationSampler(kernel_size=1, patch_size=9)
corr2 = Correlation(pad_size=4, kernel_size=1, max_displacement=4)
"""

BACKEND = b"""import spatial_correlation_sampler_backend as correlation

output = correlation.forward(input1, input2, kH, kW, patchH, patchW, padH, padW, 1, 1, 1, 1, 1, 1)
"""


def test_own_correlation_layers_stay_quiet_and_the_backend_module_is_reported():
    assert not any(code == "NPU878" for codes in _found(OWN_CORRELATION).values() for code, _ in codes)
    found = _found(BACKEND)
    for text in ("import spatial_correlation_sampler_backend", "output = correlation.forward("):
        assert ("NPU878", "error") in found.get(line_of(BACKEND, text), set()), text


# L3C-PyTorch src/torchac/setup.py and src/torchac/torchac.py, abridged: the CUDA build only when asked for, its name
# folded from a module constant; the module imports whichever build is installed
TORCHAC_SETUP = """import os
from setuptools import setup
from torch.utils.cpp_extension import CppExtension, BuildExtension, CUDAExtension

MODULE_BASE_NAME = 'torchac_backend'


def compile_ext(cuda_support):
    print('Compiling, cuda_support={}'.format(cuda_support))
    ext_module = get_extension(cuda_support)
    setup(name=ext_module.name, version='1.0.0', ext_modules=[ext_module], cmdclass={'build_ext': BuildExtension})


def get_extension(cuda_support):
    prefix = os.path.join(os.path.dirname(os.path.realpath(__file__)), MODULE_BASE_NAME)
    if cuda_support:
        return CUDAExtension(
                MODULE_BASE_NAME + '_gpu',
                [os.path.join(prefix, 'torchac.cpp'), os.path.join(prefix, 'torchac_kernel.cu')],
                define_macros=[('COMPILE_CUDA', '1')])
    else:
        return CppExtension(
                MODULE_BASE_NAME + '_cpu',
                [os.path.join(prefix, 'torchac.cpp')])


if __name__ == '__main__':
    compile_ext(os.environ.get('COMPILE_CUDA', 'auto') != 'no')
"""

TORCHAC = """# torchac can be built with and without CUDA support.
# Here, we try to import both torchac_backend_gpu and torchac_backend_cpu.
import_errors = []

try:
    import torchac_backend_gpu
    CUDA_SUPPORTED = True
except ImportError as e:
    CUDA_SUPPORTED = False
    import_errors.append(e)

try:
    import torchac_backend_cpu
    CPU_SUPPORTED = True
except ImportError as e:
    CPU_SUPPORTED = False
    import_errors.append(e)


def _get_gpu_backend():
    if not CUDA_SUPPORTED:
        raise ValueError('Got CUDA tensor, but torchac_backend_gpu is not available. ')
    return torchac_backend_gpu
"""


def test_an_extension_built_under_a_condition_is_named_for_imports_not_installs():
    import ast

    tree = ast.parse(TORCHAC_SETUP)
    assert cuda_extension_names(tree) == {"torchac_backend_gpu": 17}      # not the CppExtension of .cpp only
    assert built_cuda_extensions(tree) == {}             # an install builds it only when asked (session 11)


def test_imports_of_an_extension_the_tree_builds_under_a_condition(tmp_path):
    root = tmp_path / "l3c"
    write_tree(root, {"src/torchac/setup.py": TORCHAC_SETUP, "src/torchac/torchac.py": TORCHAC})
    found = lines_with_code(root, "NPU320")
    # the CUDA build's import; not the CPU build's, not the comment or the message naming it
    assert found.get("src/torchac/torchac.py") == {TORCHAC.splitlines().index("    import torchac_backend_gpu") + 1}
    control = tmp_path / "nobuild"       # without the setup.py that builds it the name is unknown: quiet
    write_tree(control, {"src/torchac/torchac.py": TORCHAC})
    assert "src/torchac/torchac.py" not in lines_with_code(control, "NPU320")


def test_an_extension_name_folds_only_string_constants_bound_once():
    import ast

    both = TORCHAC_SETUP.replace("MODULE_BASE_NAME = 'torchac_backend'\n",
                                 "MODULE_BASE_NAME = 'torchac_backend'\nMODULE_BASE_NAME = 'other'\n")
    assert cuda_extension_names(ast.parse(both)) == {}
    named = "from torch.utils.cpp_extension import CUDAExtension\nNAME = 'roi_align'\n" \
            "ext = CUDAExtension(name=NAME + '_cuda', sources=['roi_align_kernel.cu'])\n"
    assert built_cuda_extensions(ast.parse(named)) == {"roi_align_cuda": 3}
    called = "from torch.utils.cpp_extension import CUDAExtension\n" \
             "ext = CUDAExtension(get_name() + '_cuda', sources=['k.cu'])\n"
    assert cuda_extension_names(ast.parse(called)) == {}
