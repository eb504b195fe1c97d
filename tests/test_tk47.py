"""tk47 (session 47; TUNED on test127, test130): a script that compiles a program against the CUDA runtime itself
(a toolkit locator's `g++ x.cc ... -lcudart`, second.pytorch's find.py and the copies in its descendants), CUDA
runtime programs held in strings (NPU905), NVIDIA tools named in a run's arguments below the call's line, local
command names followed from their latest binding, deviceQuery, `faiss.Kmeans(gpu=...)` (NPU906), the FFI builder's
`with_cuda=` passed on and its generated `_ext` package, and mmcv-style report dicts (`env_info['CUDA_HOME'] = CUDA_HOME`). Each with its nearest
negatives: docstrings, comments, messages, a script that never compiles, a settings dict."""
from __future__ import annotations

import ast

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from auditor.static.firstparty import ffi_wrapper_names
from auditor.static.hand_builds import compiles_cuda_program
from tests.static_snippets import categories_at, code_severity_in_tree, codes_at, finding_keys_by_line, line_of

ENGINE = StaticEngine(load_rules())


def _categories(found: dict, text: str, needle: str) -> set[str]:
    return categories_at(found, line_of(text, needle))


def _codes(found: dict, text: str, needle: str) -> set[str]:
    return codes_at(found, line_of(text, needle))


# A GPU-architecture probe of a sparse-convolution package's build helpers (another shape than second.pytorch's:
# backslashes, an argv list, `nvcc` found through `where` / `which`, the program written to a temporary folder)
ARCH_PROBE = r'''import os
import subprocess
import sys
import tempfile
from pathlib import Path

_QUERY_SRC = """
#include <cuda_runtime.h>
#include <cstdio>
int main() {
    int count = 0;
    cudaGetDeviceCount(&count);
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, i);
        printf("%d%d\n", prop.major, prop.minor);
    }
    return 0;
}
"""


def cuda_root():
    """Return the CUDA toolkit root (CUDA_HOME, the default install folder or the folder above nvcc)."""
    root = os.getenv("CUDA_HOME")
    if root is None:
        if sys.platform == "win32":
            root = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"
        else:
            root = "/usr/local/cuda"
    if not os.path.isdir(root):
        # fall back to the nvcc on PATH
        finder = "where" if sys.platform == "win32" else "which"
        nvcc_path = subprocess.check_output(
            [finder, "nvcc"]).decode().strip()
        root = str(Path(nvcc_path).parent.parent)
    return root


def device_archs():
    root = Path(cuda_root())
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "query.cc"
        src.write_text(_QUERY_SRC)
        exe = Path(tmp) / "query"
        cmd = ["g++", str(src), "-o", str(exe), f"-I{root / 'include'}", f"-L{root / 'lib64'}", "-lcudart"]
        print("compiling the probe with -lcudart")
        subprocess.check_call(cmd)
        cmd = str(exe)
        out = subprocess.check_output(cmd, shell=True).decode()
        cmd = "nvidia-smi --query-gpu=compute_cap --format=csv,noheader"
        smi = subprocess.check_output(cmd, shell=True).decode()
    return out.split(), smi.split()
'''


def test_probe_program_build_reads_as_a_build():
    assert compiles_cuda_program(ast.parse(ARCH_PROBE))
    found = finding_keys_by_line(ENGINE, ARCH_PROBE, "spconv_build/probe.py")
    # the toolkit folders a build looks in, and the link flag of its compile command: kernel
    assert _categories(found, ARCH_PROBE, 'root = "C:\\\\Program Files\\\\NVIDIA GPU') == {"kernel"}
    assert _categories(found, ARCH_PROBE, 'root = "/usr/local/cuda"') == {"kernel"}
    assert "kernel" in _categories(found, ARCH_PROBE, 'cmd = ["g++", str(src)')
    # the program on the CUDA runtime: device, on its include line; the string's own line keeps NPU399
    assert _codes(found, ARCH_PROBE, "#include <cuda_runtime.h>") == {"NPU905"}
    assert _categories(found, ARCH_PROBE, "#include <cuda_runtime.h>") == {"device"}
    assert "NPU905" not in _codes(found, ARCH_PROBE, '_QUERY_SRC = """')
    # `which nvcc` run by a call whose arguments start on the next line: the call's line too (third_party)
    assert _categories(found, ARCH_PROBE, "nvcc_path = subprocess.check_output(") == {"third_party"}
    # a local command name run after several bindings: only the run of the nvidia-smi binding is the tool's
    assert _codes(found, ARCH_PROBE, "smi = subprocess.check_output(cmd") == {"NPU407"}
    assert "NPU407" not in _codes(found, ARCH_PROBE, "out = subprocess.check_output(cmd")
    assert "NPU407" not in _codes(found, ARCH_PROBE, "subprocess.check_call(cmd)")
    for quiet in ('"""Return the CUDA toolkit root', "# fall back to the nvcc", 'print("compiling the probe'):
        assert line_of(ARCH_PROBE, quiet) not in found, quiet


# The same folders in a script that compiles nothing (a report of where CUDA might be): not a build
NO_BUILD = '''import os

def guess_cuda_home():
    """Guess where CUDA is (C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA on Windows)."""
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    print("compile with: g++ main.cc -I/usr/local/cuda/include -lcudart")
    return home
'''


def test_folders_outside_a_build_stay_quiet():
    assert not compiles_cuda_program(ast.parse(NO_BUILD))
    found = finding_keys_by_line(ENGINE, NO_BUILD, "tools/where_cuda.py")
    assert "NPU956" not in _codes(found, NO_BUILD, 'home = os.environ.get("CUDA_HOME")')
    for quiet in ('"""Guess where CUDA', 'print("compile with'):
        assert line_of(NO_BUILD, quiet) not in found, quiet


def test_compile_command_shapes():
    assert compiles_cuda_program(ast.parse('os.system(f"/usr/bin/g++-9 {src} -o probe -lcuda")'))
    assert compiles_cuda_program(ast.parse('cmd = (f"nvcc {src} -o {exe}" f" -L{home}/lib64 -lcudart")'))
    assert compiles_cuda_program(ast.parse('subprocess.check_call("g++ {} -o probe -lcudart".format(src), shell=True)'))
    assert compiles_cuda_program(ast.parse('cmd = "g++ %s -o probe -L%s -lcudart" % (src, lib)'))
    assert not compiles_cuda_program(ast.parse('cmd = f"g++ {src} -o {exe} -lm -lpthread"'))
    assert not compiles_cuda_program(ast.parse('logger.info("g++ probe.cc -lcudart")'))
    assert not compiles_cuda_program(ast.parse('"""Build: g++ probe.cc -lcudart"""'))


# A benchmark that compiles a bandwidth probe against the CUDA runtime, then runs torch on `--device`: the compile
# makes its link flag a build's, but its device strings stay device strings (review47 item 1)
BANDWIDTH = '''import argparse
import subprocess

import torch


def build_probe(src="probe.cu", out="probe"):
    subprocess.check_call(["nvcc", src, "-o", out, "-lcudart"])
    return subprocess.check_output(["./" + out]).decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    args = parser.parse_args()
    if args.device in ("cuda", "gpu"):
        print(build_probe())
    x = torch.randn(1024, 1024, device=args.device)
    print((x @ x).sum().item())
'''


def test_program_build_keeps_runtime_device_strings():
    assert compiles_cuda_program(ast.parse(BANDWIDTH))
    found = finding_keys_by_line(ENGINE, BANDWIDTH, "bench/bench_bandwidth.py")
    assert _codes(found, BANDWIDTH, 'parser.add_argument("--device"') == {"NPU003"}
    assert _codes(found, BANDWIDTH, "if args.device in") == {"NPU003"}
    assert _codes(found, BANDWIDTH, '"-lcudart"]') >= {"NPU353"}


DEVICE_QUERY = '''import subprocess

def compute_capability(cuda_home):
    query = f"{cuda_home}/extras/demo_suite/deviceQuery"
    cmd = f"{query} | grep 'CUDA Capability'"
    line = subprocess.check_output(cmd, shell=True).decode()
    return line.split()[-1]
'''


def test_device_query_probe():
    found = finding_keys_by_line(ENGINE, DEVICE_QUERY, "utils/arch.py")
    assert _categories(found, DEVICE_QUERY, "query = f\"{cuda_home}/extras") == {"third_party"}
    assert _categories(found, DEVICE_QUERY, 'cmd = f"{query} | grep') == {"third_party"}


# a command name bound again in a nested block: the run follows its latest binding there (review47 item 9)
REBOUND_TOOL = '''import subprocess


def driver(verbose):
    tool = "nvidia-smi"
    if verbose:
        tool = "nvidia-smi -q"
    return subprocess.run(tool, shell=True, capture_output=True).stdout
'''


def test_run_follows_a_binding_in_a_nested_block():
    found = finding_keys_by_line(ENGINE, REBOUND_TOOL, "utils/gpuinfo.py")
    assert _codes(found, REBOUND_TOOL, "return subprocess.run(tool") == {"NPU407"}
    assert _codes(found, REBOUND_TOOL, 'tool = "nvidia-smi -q"') == {"NPU407"}


FAISS = '''import faiss
import numpy as np


def run_kmeans(x, num_cluster, args):
    d = x.shape[1]
    kmeans = faiss.Kmeans(d, num_cluster, niter=20, verbose=True, gpu=args.faiss_gpu)
    kmeans.train(x)
    cpu_kmeans = faiss.Kmeans(d, num_cluster, niter=20, gpu=False)
    cpu_kmeans.train(x)
    # faiss.Kmeans(d, k, gpu=True) would train on every GPU
    return kmeans.centroids, cpu_kmeans.centroids
'''


def test_faiss_kmeans_on_gpu():
    found = finding_keys_by_line(ENGINE, FAISS, "cluster/kmeans.py")
    assert _codes(found, FAISS, "kmeans = faiss.Kmeans(d, num_cluster, niter=20, verbose") == {"NPU906"}
    assert "NPU906" not in _codes(found, FAISS, "cpu_kmeans = faiss.Kmeans(")
    assert line_of(FAISS, "# faiss.Kmeans(d, k") not in found


# the faster-rcnn.pytorch-era FFI build of a roi_pooling extension
FFI_BUILD = '''import os
import torch
from torch.utils.ffi import create_extension

sources = ['src/roi_pooling.c']
headers = ['src/roi_pooling.h']
defines = []
with_cuda = False

if torch.cuda.is_available():
    print('Including CUDA code.')
    sources += ['src/roi_pooling_cuda.c']
    headers += ['src/roi_pooling_cuda.h']
    defines += [('WITH_CUDA', None)]
    with_cuda = True

ffi = create_extension(
    '_ext.roi_pooling',
    headers=headers,
    sources=sources,
    define_macros=defines,
    relative_to=__file__,
    with_cuda=with_cuda,
    extra_objects=['src/cuda/roi_pooling.cu.o']
)
'''

# a JIT build that passes the same switch on: the call is kernel already, the keyword not reported again
JIT_LOAD = '''from torch.utils.cpp_extension import load

def build(with_cuda):
    return load(name="ops", sources=["ops.cpp"], with_cuda=with_cuda)
'''


def test_ffi_with_cuda_passed_on():
    found = finding_keys_by_line(ENGINE, FFI_BUILD, "roi_pooling/build.py")
    assert _categories(found, FFI_BUILD, "with_cuda=with_cuda,") == {"kernel"}
    assert line_of(FFI_BUILD, "print('Including CUDA code.')") not in found
    jit = finding_keys_by_line(ENGINE, JIT_LOAD, "ops/jit.py")
    assert len([k for k in jit.get(line_of(JIT_LOAD, "return load("), ()) if k[0] == "NPU369"]) == 0


# mmcv's / mmdet's collect_env shape: a returned dict of report rows, versions among them
COLLECT_ENV = '''import os.path as osp
import subprocess
import sys

import torch
import torchvision


def collect_env():
    env_info = {}
    env_info['sys.platform'] = sys.platform
    env_info['Python'] = sys.version.replace('\\n', '')
    cuda_available = torch.cuda.is_available()
    env_info['CUDA available'] = cuda_available
    if cuda_available:
        from torch.utils.cpp_extension import CUDA_HOME
        env_info['CUDA_HOME'] = CUDA_HOME
        env_info['CUDA_HOME (str)'] = str(CUDA_HOME)
        env_info['CUDA runtime'] = torch.version.cuda
        env_info['GPU 0'] = torch.cuda.get_device_name(0)
    env_info['PyTorch'] = torch.__version__
    env_info['TorchVision'] = torchvision.__version__
    return env_info


def build_settings():
    from torch.utils.cpp_extension import CUDA_HOME
    settings = {}
    settings['CUDA_HOME'] = CUDA_HOME
    return settings
'''


def test_report_dict_rows_quiet():
    found = finding_keys_by_line(ENGINE, COLLECT_ENV, "mmdet_x/utils/collect_env.py")
    for quiet in ("env_info['CUDA_HOME'] = CUDA_HOME", "env_info['CUDA_HOME (str)']", "env_info['CUDA runtime']"):
        assert line_of(COLLECT_ENV, quiet) not in found, quiet
    # a call stays (decision 48), and the import that binds CUDA_HOME stays
    assert "device" in _categories(found, COLLECT_ENV, "env_info['GPU 0'] = torch.cuda.get_device_name(0)")
    assert line_of(COLLECT_ENV, "        from torch.utils.cpp_extension import CUDA_HOME") in found
    # a settings dict (no report: no versions, one row) keeps its row
    assert line_of(COLLECT_ENV, "settings['CUDA_HOME'] = CUDA_HOME") in found


# the FFI builder's committed output beside the module that calls it (faster-rcnn.pytorch-era layout)
FFI_WRAPPER = '''
from torch.utils.ffi import _wrap_function
from ._roi_pooling import lib as _lib, ffi as _ffi

__all__ = []
def _import_symbols(locals):
    for symbol in dir(_lib):
        fn = getattr(_lib, symbol)
        if callable(fn):
            locals[symbol] = _wrap_function(fn, _ffi)
        else:
            locals[symbol] = fn
        __all__.append(symbol)

_import_symbols(locals())
'''

FFI_CALLER = '''import torch
from torch.autograd import Function
from .._ext import roi_pooling


class RoIPoolFunction(Function):
    @staticmethod
    def forward(ctx, features, rois, output, argmax):
        roi_pooling.roi_pooling_forward_cuda(7, 7, 0.0625, features, rois, output, argmax)
        return output
'''


def test_ffi_output_package_is_the_extension(tmp_path):
    found = code_severity_in_tree(tmp_path, {
        "lib/roi_pooling/_ext/__init__.py": "",
        "lib/roi_pooling/_ext/roi_pooling/__init__.py": FFI_WRAPPER,
        "lib/roi_pooling/functions/roi_pool.py": FFI_CALLER,
        "lib/roi_pooling/functions/__init__.py": "",
        # a Python package that is named `*_ext` but wraps nothing stays Python
        "lib/other_ext/__init__.py": "def gather_cuda(x):\n    return x\n",
    })
    caller = "lib/roi_pooling/functions/roi_pool.py"
    assert "NPU891" in found.get((caller, line_of(FFI_CALLER, "roi_pooling.roi_pooling_forward_cuda(")), {})
    assert ffi_wrapper_names([(tmp_path / "lib/roi_pooling/_ext/roi_pooling/__init__.py",
                               "lib/roi_pooling/_ext/roi_pooling/__init__.py"),
                              (tmp_path / "lib/other_ext/__init__.py", "lib/other_ext/__init__.py")]) \
        == {"_ext", "roi_pooling"}


# a help text that ends in a link flag runs nothing; a compiler's command line links (review47 item 10)
HELP_TEXT = '''import subprocess

HELP = "build the plugin first: g++ plugin.cc -shared -o libplugin.so -lcudart"


def build(src):
    subprocess.check_call(f"g++ {src} -shared -o libplugin.so -lcudart", shell=True)
'''


def test_link_flag_only_in_a_compiler_command():
    found = finding_keys_by_line(ENGINE, HELP_TEXT, "tools/gen_plugin.py")
    assert not _codes(found, HELP_TEXT, "HELP = ") & {"NPU064", "NPU353"}
    assert _codes(found, HELP_TEXT, 'f"g++ {src}') & {"NPU064", "NPU353"}


def test_ffi_wrapper_fact_kept_in_the_summary(tmp_path):
    """review47 item 16: the wrapper answer is kept in the file's cached summary; a warm run reads no file for it."""
    from types import SimpleNamespace

    rel = "lib/nms/_ext/nms/__init__.py"
    wrapper = tmp_path / rel
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(FFI_WRAPPER)
    results = [SimpleNamespace(path=rel, summary={})]
    changed: set[str] = set()
    assert ffi_wrapper_names([(wrapper, rel)], results, changed) == {"_ext", "nms"}
    assert changed == {rel} and results[0].summary
    wrapper.unlink()        # the warm run: the summary answers
    changed.clear()
    assert ffi_wrapper_names([(wrapper, rel)], results, changed) == {"_ext", "nms"} and not changed
