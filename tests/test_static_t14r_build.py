"""t14r (issue 14, session 11): the CUDA side of extension builds (rules/kernel_cuda_build_helpers.yaml, NPU353), on
setup.py files written like the real ones (pyg's torch_cluster / torch_sparse, the Dao-AILab template of
causal-conv1d / fast-hadamard-transform): the "cuda" build variant is a kernel finding (not a device string to
rewrite), the "nvcc" slot of extra_compile_args is nvcc's flags (not the nvcc command), the template's toolkit
helpers are kernel findings; devices in modules that build nothing, and the nvcc command, keep their own rules."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def findings(src: str, name: str = "setup.py"):
    return snippet_findings(ENGINE, src, name)


def by_line(src: str, name: str = "setup.py") -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in findings(src, name):
        out.setdefault(f.line, set()).add(f.code)
    return out


PYG_SETUP = '''\
import glob
import os
import os.path as osp
from itertools import product

import torch
from setuptools import find_packages, setup
from torch.__config__ import parallel_info
from torch.utils.cpp_extension import (CUDA_HOME, BuildExtension, CppExtension,
                                       CUDAExtension)

WITH_CUDA = False
if torch.cuda.is_available():
    WITH_CUDA = CUDA_HOME is not None or torch.version.hip
suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']
if os.getenv('FORCE_CUDA', '0') == '1':
    suffices = ['cuda', 'cpu']
if os.getenv('FORCE_ONLY_CUDA', '0') == '1':
    suffices = ['cuda']


def get_extensions():
    extensions = []
    extensions_dir = osp.join('csrc')
    main_files = glob.glob(osp.join(extensions_dir, '*.cpp'))
    for main, suffix in product(main_files, suffices):
        define_macros = [('WITH_PYTHON', None)]
        extra_compile_args = {'cxx': ['-O2']}
        extra_link_args = ['-s']

        if suffix == 'cuda':
            define_macros += [('WITH_CUDA', None)]
            nvcc_flags = os.getenv('NVCC_FLAGS', '')
            nvcc_flags = [] if nvcc_flags == '' else nvcc_flags.split(' ')
            nvcc_flags += ['-O2']
            extra_compile_args['nvcc'] = nvcc_flags

        name = main.split(os.sep)[-1][:-4]
        sources = [main]
        path = osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')
        if suffix == 'cuda' and osp.exists(path):
            sources += [path]

        Extension = CppExtension if suffix == 'cpu' else CUDAExtension
        extension = Extension(
            f'torch_cluster._{name}_{suffix}',
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
        extensions += [extension]
    return extensions
'''


def test_pyg_build_variants_are_kernel_findings_without_a_device_rewrite():
    lines = by_line(PYG_SETUP)
    src = PYG_SETUP.splitlines()
    for text in ("suffices = ['cpu', 'cuda'] if WITH_CUDA", "    suffices = ['cuda', 'cpu']",
                 "    suffices = ['cuda']", "        if suffix == 'cuda':", "        if suffix == 'cuda' and osp"):
        line = next(i for i, t in enumerate(src, 1) if t.startswith(text))
        assert "NPU353" in lines.get(line, set()), (text, lines.get(line))
        assert "NPU003" not in lines.get(line, set()), text    # not a device string: no `npu` rewrite
    nvcc_line = next(i for i, t in enumerate(src, 1) if "extra_compile_args['nvcc']" in t)
    assert "NPU353" in lines[nvcc_line] and "NPU407" not in lines[nvcc_line]
    # the CUDA APIs of the same file keep their own rules
    assert "NPU002" in lines[next(i for i, t in enumerate(src, 1) if "torch.cuda.is_available()" in t)]
    # the CPU variant is not a finding
    assert "NPU353" not in lines.get(next(i for i, t in enumerate(src, 1) if "if suffix == 'cpu'" in t), set())


DAO_TEMPLATE = '''\
import os
import subprocess
from packaging.version import parse, Version
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

PACKAGE_NAME = "causal_conv1d"
SKIP_CUDA_BUILD = os.getenv("CAUSAL_CONV1D_SKIP_CUDA_BUILD", "FALSE") == "TRUE"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    return raw_output, parse(output[release_idx].split(",")[0])


def check_if_cuda_home_none(global_option: str) -> None:
    if CUDA_HOME is not None:
        return
    raise RuntimeError(f"{global_option} was requested, but nvcc was not found.")


def append_nvcc_threads(nvcc_extra_args):
    nvcc_threads = os.getenv("NVCC_THREADS") or "4"
    return nvcc_extra_args + ["--threads", nvcc_threads]


ext_modules = []
if not SKIP_CUDA_BUILD:
    check_if_cuda_home_none(PACKAGE_NAME)
    cc_flag = []
    _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
    ext_modules.append(
        CUDAExtension(
            name="causal_conv1d_cuda",
            sources=["csrc/causal_conv1d.cpp", "csrc/causal_conv1d_fwd.cu"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": append_nvcc_threads(["-O3", "--use_fast_math"] + cc_flag),
            },
        )
    )
'''


def test_dao_template_helpers_and_the_nvcc_slot_are_kernel_findings():
    src = DAO_TEMPLATE.splitlines()
    fs = findings(DAO_TEMPLATE)
    lines: dict[int, dict[str, str]] = {}
    for f in fs:
        lines.setdefault(f.line, {})[f.code] = f.category
    for text in ("    check_if_cuda_home_none(PACKAGE_NAME)", "    _, bare_metal_version = get_cuda_bare_metal",
                 '                "nvcc": append_nvcc_threads('):
        line = next(i for i, t in enumerate(src, 1) if t.startswith(text))
        assert lines.get(line, {}).get("NPU353") == "kernel", (text, lines.get(line))
        assert "NPU039" not in lines.get(line, {}), text     # not a device helper
    slot = next(i for i, t in enumerate(src, 1) if '"nvcc": append' in t)
    assert "NPU407" not in lines[slot]        # the key holds nvcc's flags; it runs no command
    # the nvcc command run by the version probe is still the NVIDIA tool
    run = next(i for i, t in enumerate(src, 1) if '"/bin/nvcc", "-V"' in t)
    assert "NPU407" in lines[run]
    # defining the helpers is not a finding; only their calls are
    assert "NPU353" not in lines.get(next(i for i, t in enumerate(src, 1) if t.startswith("def check_if")), {})


def test_devices_and_nvcc_paths_outside_the_build_keep_their_rules():
    trainer = '''\
    import shutil
    import torch


    def pick(devices):
        nvcc = shutil.which("nvcc")
        for name in ["cuda", "cpu"]:
            if name == "cuda" and torch.cuda.is_available():
                return torch.device(name)
        return nvcc
    '''
    lines = by_line(trainer, "train.py")
    src = textwrap.dedent(trainer).splitlines()
    assert "NPU353" not in set().union(*lines.values())
    assert "NPU003" in lines[next(i for i, t in enumerate(src, 1) if 'if name == "cuda"' in t)]
    assert "NPU407" in lines[next(i for i, t in enumerate(src, 1) if "shutil.which" in t)]


def test_nvcc_slot_switched_off_and_environment_keys_are_quiet():
    src = '''\
    import os
    from torch.utils.cpp_extension import CppExtension

    extra_compile_args = {"cxx": ["-O3"], "nvcc": None}
    os.environ["nvcc"] = "x"
    ext = CppExtension("ops_cpu", ["ops.cpp"], extra_compile_args=extra_compile_args)
    '''
    assert not any(f.code == "NPU353" for f in findings(src))
