"""tk46 (session 46; TUNED on test124, test125): build scripts that hand .cu sources to nvcc through distutils' own
compiler (py-faster-rcnn's NMS setup.py and its copies: `locate_cuda()`, `customize_compiler_for_nvcc`), the toolkit
locator's entries (`CUDA['lib64']`), the toolkit's folders in a build script (NPU956), and a literal string given to
eval() / exec() read as the code it runs. Each with its nearest negatives: docstrings, comments, messages, a torch
cpp_extension build's nvcc version probe, a compile-args table, a training script."""
from __future__ import annotations

import ast

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from auditor.static.hand_builds import compiles_cuda_by_hand, toolkit_configs
from tests.static_snippets import categories_at, finding_keys_by_line, line_of

ENGINE = StaticEngine(load_rules())


def _line(text: str, needle: str) -> int:
    return line_of(text, needle)


def _categories(found: dict[int, set[tuple[str, str, str]]], text: str, needle: str) -> set[str]:
    return categories_at(found, line_of(text, needle))


# The Cython GPU-extension shape of the template (an LBP / CUDA feature extractor's setup.py: `CUDA_HOME`, the
# `iteritems` of Python 2 copies, include dirs beside numpy's)
CYTHON_SETUP = '''import os
from os.path import join as pjoin
from setuptools import setup
from distutils.extension import Extension
from Cython.Distutils import build_ext
import numpy as np


def find_in_path(name, path):
    for dir in path.split(os.pathsep):
        binpath = pjoin(dir, name)
        if os.path.exists(binpath):
            return os.path.abspath(binpath)
    return None


def locate_cuda():
    """Locate the CUDA environment on the system; looks for nvcc in the PATH."""
    # first check if the CUDA_HOME env variable is in use
    if 'CUDA_HOME' in os.environ:
        home = os.environ['CUDA_HOME']
        nvcc = pjoin(home, 'bin', 'nvcc')
    else:
        nvcc = find_in_path('nvcc', os.environ['PATH'])
        if nvcc is None:
            raise EnvironmentError('The nvcc binary could not be located in your $PATH')
        home = os.path.dirname(os.path.dirname(nvcc))
    cudaconfig = {'home': home, 'nvcc': nvcc,
                  'include': pjoin(home, 'include'),
                  'lib64': pjoin(home, 'lib64')}
    return cudaconfig


CUDA = locate_cuda()


def customize_compiler_for_nvcc(self):
    """inject deep into distutils to customize how the dispatch to gcc/nvcc works."""
    self.src_extensions.append('.cu')
    default_compiler_so = self.compiler_so
    super = self._compile

    def _compile(obj, src, ext, cc_args, extra_postargs, pp_opts):
        if os.path.splitext(src)[1] == '.cu':
            # use the cuda for .cu files
            self.set_executable('compiler_so', CUDA['nvcc'])
            postargs = extra_postargs['nvcc']
        else:
            postargs = extra_postargs['gcc']
        super(obj, src, ext, cc_args, postargs, pp_opts)
        self.compiler_so = default_compiler_so

    self._compile = _compile


class custom_build_ext(build_ext):
    def build_extensions(self):
        customize_compiler_for_nvcc(self.compiler)
        build_ext.build_extensions(self)


ext = Extension('lbp_cuda',
                sources=['lbp_kernel.cu', '_lbp_gpu.pyx'],
                libraries=['cudart'],
                language='c++',
                include_dirs=[CUDA['include'], np.get_include()],
                library_dirs=[CUDA['lib64']],
                extra_compile_args={'gcc': [], 'nvcc': ['-arch=sm_60', '-c', '--compiler-options', "'-fPIC'"]})

setup(name='lbp_cuda', ext_modules=[ext], cmdclass={'build_ext': custom_build_ext})
'''


def test_hand_built_nvcc_extension_is_kernel():
    found = finding_keys_by_line(ENGINE, CYTHON_SETUP, "setup.py")
    for needle in ("nvcc = pjoin(home, 'bin', 'nvcc')", "nvcc = find_in_path('nvcc'",
                   "self.set_executable('compiler_so', CUDA['nvcc'])", "postargs = extra_postargs['nvcc']",
                   "include_dirs=[CUDA['include']", "library_dirs=[CUDA['lib64']]"):
        assert _categories(found, CYTHON_SETUP, needle) == {"kernel"}, needle
    for quiet in ('"""Locate the CUDA', "# first check", "raise EnvironmentError('The nvcc",
                  '"""inject deep', "# use the cuda", "postargs = extra_postargs['gcc']"):
        assert _line(CYTHON_SETUP, quiet) not in found, quiet


# the SamGraph shape: the locator answers `dict(NVCC_PATH=..., CUDA_INCLUDE_DIRS=..., CUDA_LIB_DIRS=...)` and the
# customiser takes nvcc's path as a parameter
SAMGRAPH_SETUP = '''import os
from setuptools import setup, Extension
from setuptools.command.build_ext import build_ext


def find_cuda():
    nvcc_compiler = os.path.join(os.environ.get('SAMGRAPH_CUDA_HOME', ''), 'bin', 'nvcc')
    return dict(NVCC_PATH=nvcc_compiler,
                CUDA_INCLUDE_DIRS=[os.environ.get('SAMGRAPH_CUDA_INCLUDE', '')],
                CUDA_LIB_DIRS=[os.environ.get('SAMGRAPH_CUDA_LIB', '')])


cuda_config = find_cuda()


def customize_compiler_for_nvcc(self, nvcc_path):
    self.src_extensions.append('.cu')
    self.set_executable('compiler_so', nvcc_path)


ext = Extension('samgraph.common.c_lib', sources=['samgraph/common/cuda/cuda_engine.cu'],
                include_dirs=cuda_config['CUDA_INCLUDE_DIRS'],
                library_dirs=cuda_config['CUDA_LIB_DIRS'])
'''


def test_locator_answer_by_keywords():
    tree = ast.parse(SAMGRAPH_SETUP)
    assert compiles_cuda_by_hand(tree)
    assert toolkit_configs(tree) == {"cuda_config"}
    found = finding_keys_by_line(ENGINE, SAMGRAPH_SETUP, "setup.py")
    assert "kernel" in _categories(found, SAMGRAPH_SETUP, "include_dirs=cuda_config['CUDA_INCLUDE_DIRS']")
    assert "kernel" in _categories(found, SAMGRAPH_SETUP, "library_dirs=cuda_config['CUDA_LIB_DIRS']")


# a torch cpp_extension build that asks nvcc for its version: a probe (t27b: third_party), no hand build
PROBE_SETUP = '''import subprocess
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME


def get_cuda_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    return raw_output.split()


def compile_args():
    return {"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]}


args = compile_args()
ext = CUDAExtension("ops._C", ["csrc/ops.cpp", "csrc/ops_kernel.cu"], extra_compile_args={"cxx": args["cxx"]})
'''


def test_torch_build_probe_and_compile_args_unchanged():
    tree = ast.parse(PROBE_SETUP)
    assert not compiles_cuda_by_hand(tree)
    assert toolkit_configs(tree) == frozenset()      # compile flags by compiler, no folder: not a locator
    found = finding_keys_by_line(ENGINE, PROBE_SETUP, "setup.py")
    assert _categories(found, PROBE_SETUP, 'cuda_dir + "/bin/nvcc"') == {"third_party"}
    # the `args["cxx"]` entry adds no toolkit-entry finding (the line holds the CUDAExtension and its .cu source)
    assert "NPU353" not in {key[0] for key in found[_line(PROBE_SETUP, 'args["cxx"]')]}


TRAIN = '''import os
import torch


def get_cuda_info():
    return {'nvcc': os.popen('which nvcc').read(), 'home': os.environ.get('CUDA_HOME', '')}


CUDA = get_cuda_info()
print(CUDA['home'])
PATH = "{}:{}".format(os.environ['PATH'], "/opt/cuda/bin")
'''


def test_training_script_is_no_build():
    found = finding_keys_by_line(ENGINE, TRAIN, "train.py")
    assert _line(TRAIN, "print(CUDA['home'])") not in found       # not a build script: no toolkit entry read
    assert _line(TRAIN, "/opt/cuda/bin") not in found             # NPU956 holds only in build scripts


EVAL = '''import torch


class Trainer:
    def build(self, cfg):
        self.J_regressor = eval(f'torch.Tensor(self.dataset.joint_regressor_{cfg.DATASET.target_joint_set}).cuda()')
        model = eval("torch.nn.DataParallel(self.net).cuda()")
        exec("n_gpu = torch.cuda.device_count()")
        dataset = eval(f'{cfg.DATASET.name}(transform, "train")')
        self.model.eval()
        print("call .cuda() on the regressor")
        "self.net.cuda()"
        broken = eval("torch.cuda(")
'''


def test_eval_string_is_code():
    text = EVAL
    found = finding_keys_by_line(ENGINE, text, "base.py")
    assert "NPU001" in {k[0] for k in found[_line(text, "self.J_regressor = eval(")]}
    assert "NPU001" in {k[0] for k in found[_line(text, 'model = eval("torch.nn.DataParallel')]}
    assert "device" in _categories(found, text, 'exec("n_gpu')
    for quiet in ("dataset = eval(", "self.model.eval()", 'print("call .cuda()', '"self.net.cuda()"',
                  'broken = eval("torch.cuda(")'):
        assert _line(text, quiet) not in found, quiet
    assert all(f.fix == "none" for f in ENGINE.analyze_bytes(text.encode(), "base.py").findings
               if f.line == _line(text, "self.J_regressor"))


def test_shadowed_eval_is_no_code():
    # the file's own eval (imported or defined) is no builtin: its string argument is text
    for text in ("from helpers import eval\n" + EVAL, EVAL + "\n\ndef eval(text):\n    return text\n"):
        found = finding_keys_by_line(ENGINE, text, "base.py")
        assert not any(key[0] == "NPU001" for hits in found.values() for key in hits)


# CuLE's setup.py: the table comes from the package's own runtime module, its nvcc entry is the compiler
CULE_SETUP = '''import os
from setuptools import setup
from setuptools.command.build_ext import build_ext
from torchcule_atari import runtime

CUDA = runtime._locate()
include_dirs = [os.path.join('third_party', 'agency'), CUDA['include']]


def customize_compiler_for_nvcc(self):
    self.src_extensions.append('.cu')
    def _compile(obj, src, ext, cc_args, extra_postargs, pp_opts):
        if os.path.splitext(src)[1] == '.cu':
            self.set_executable('compiler_so', CUDA['nvcc'])
    self._compile = _compile
'''


def test_table_whose_nvcc_entry_compiles():
    found = finding_keys_by_line(ENGINE, CULE_SETUP, "setup.py")
    assert "kernel" in _categories(found, CULE_SETUP, "CUDA['include']]")
    assert _line(CULE_SETUP, "include_dirs = [os.path.join('third_party'") in found


# a pybind11 build linking the toolkit its own locator found (no torch, no distutils Extension class)
PYBIND_SETUP = '''import os
from glob import glob
from setuptools import setup
from pybind11.setup_helpers import Pybind11Extension


def locate_cuda():
    home = os.environ.get('CUDA_PATH', '/usr/local/cuda')
    return {'home': home, 'nvcc': os.path.join(home, 'bin', 'nvcc'), 'include': os.path.join(home, 'include'),
            'lib64': os.path.join(home, 'lib64')}


CUDA = locate_cuda()
sources = glob("src/*.cpp") + glob("src/CUDAKernels/*.cu")
extra_kwargs = {
    'library_dirs': [CUDA['lib64']],
    'libraries': ['cudart'],
}
ext_modules = [Pybind11Extension(name="coil_evolution", sources=sources, **extra_kwargs)]
'''


def test_locator_beside_setuptools_is_a_build():
    found = finding_keys_by_line(ENGINE, PYBIND_SETUP, "setup.py")
    assert "kernel" in _categories(found, PYBIND_SETUP, "'library_dirs': [CUDA['lib64']],")
    assert "kernel" in _categories(found, PYBIND_SETUP, "home = os.environ.get('CUDA_PATH', '/usr/local/cuda')")
