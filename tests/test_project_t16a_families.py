"""Project-file families behind the misses of project splits test17 and test18 (issue 15, t16a; tuned on both): each
test is a realistic snippet or small tree written after the repository's own files (TurboDiffusion's inference
launches, Samba's Dockerfile, SpinQuant's launches, HunyuanVideo-Avatar's `--use-fp8`, seed-vc's macOS requirements),
with the lines that must be found and the lines that must not."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


# TurboDiffusion: setup.py builds the package's own CUDA extension; turbodiffusion/ops/core.py imports it at module
# level; the inference script reaches it through `modify_model` and the `ops` package, found on PYTHONPATH
_SETUP = """\
    from setuptools import setup, find_packages
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    ext_modules = [
        CUDAExtension(
            name="turbo_diffusion_ops",
            sources=["turbodiffusion/ops/bindings.cpp", "turbodiffusion/ops/quant/quant.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    ]
    setup(name="turbodiffusion", packages=find_packages(), ext_modules=ext_modules,
          cmdclass={"build_ext": BuildExtension})
    """
_OPT_IN_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    ext_modules = []
    if os.environ.get("BUILD_TURBO_OPS", "0") == "1":
        ext_modules.append(CUDAExtension(name="turbo_diffusion_ops", sources=["turbodiffusion/ops/quant/quant.cu"]))
    setup(name="turbodiffusion", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
    """


def _turbo_tree(tmp_path: Path, setup: str = _SETUP) -> Path:
    root = tmp_path / "TurboDiffusion"
    _write(root, "setup.py", setup)
    _write(root, "turbodiffusion/ops/__init__.py", "from .core import Int8Linear, FastRMSNorm\n")
    _write(root, "turbodiffusion/ops/core.py", """\
        import torch
        import torch.nn as nn
        from turbo_diffusion_ops import quant_cuda, gemm_cuda


        class Int8Linear(nn.Module):
            def forward(self, x):
                q, s = quant_cuda(x)
                return gemm_cuda(q, self.weight, s)


        class FastRMSNorm(nn.Module):
            pass
        """)
    _write(root, "turbodiffusion/inference/modify_model.py", """\
        import torch
        from ops import FastRMSNorm, Int8Linear


        def create_model(args):
            return Int8Linear() if args.quant_linear else torch.nn.Linear(4, 4)
        """)
    _write(root, "turbodiffusion/inference/wan2.1_t2v_infer.py", """\
        import argparse

        import torch
        from modify_model import create_model

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--quant_linear", action="store_true")
            create_model(parser.parse_args())
        """)
    _write(root, "scripts/inference_wan2.1_t2v.sh", """\
        export PYTHONPATH=turbodiffusion

        # python turbodiffusion/inference/wan2.1_t2v_infer.py --help
        python turbodiffusion/inference/wan2.1_t2v_infer.py \\
            --model Wan2.1-1.3B \\
            --quant_linear
        """)
    _write(root, "scripts/no_path.sh", """\
        python turbodiffusion/inference/wan2.1_t2v_infer.py --model Wan2.1-1.3B
        """)
    return root


def _launches(run) -> dict[tuple[str, int], str]:
    return {(r.path.rsplit("/", 1)[-1], f.line): f.message for r in run.results for f in r.findings
            if f.code == "NPU827"}


def test_a_launch_reaching_an_import_of_the_trees_own_cuda_extension_is_a_kernel_error(tmp_path):
    from auditor.runner import run_static

    got = _launches(run_static([_turbo_tree(tmp_path)], jobs=1))
    # the launch line (the PYTHONPATH folder holds `ops`), not the comment; without PYTHONPATH `ops` is not found
    assert set(got) == {("inference_wan2.1_t2v.sh", 4)}, got
    message = got[("inference_wan2.1_t2v.sh", 4)]
    assert "turbodiffusion/ops/core.py:3 `turbo_diffusion_ops` (the tree's CUDA extension, setup.py:5)" in message, message


def test_an_opt_in_extension_is_not_an_import_failure(tmp_path):
    from auditor.runner import run_static

    assert not _launches(run_static([_turbo_tree(tmp_path, _OPT_IN_SETUP)], jobs=1))


def test_a_warm_run_finds_the_extension_from_the_cached_facts(tmp_path, monkeypatch):
    from auditor.runner import run_static
    from tests.test_tree_facts import _refuse_python_reads

    root = _turbo_tree(tmp_path)
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    _refuse_python_reads(monkeypatch)       # setup.py's extension names are its `hard` facts
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _launches(warm) == _launches(cold) and len(_launches(cold)) == 1


def test_setup_extension_facts_and_relative_imports_of_the_built_module():
    from auditor.project.launch_imports import failing_imports, import_failure_facts

    setup = import_failure_facts(ast.parse(textwrap.dedent("""\
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension
        setup(name="quarot", ext_modules=[CUDAExtension("quarot._CUDA", ["quarot/kernels/gemm.cu"])])
        """)), [], "setup.py")
    assert setup["extensions"] == {"quarot._CUDA": 3}, setup
    facts = {"quarot/nn/linear.py": {"imports": [[1, "", 2, ["_CUDA"]]]}, "setup.py": setup}
    chains = failing_imports("quarot/nn/linear.py", facts.get, [""], {"quarot/_CUDA": "setup.py:3"})
    assert chains == {"kernel": ["quarot/nn/linear.py:1 `..` (the tree's CUDA extension, setup.py:3)"]}, chains
    # a file of the tree that is not setup.py keeps no extension facts
    assert "extensions" not in import_failure_facts(ast.parse("from torch.utils.cpp_extension import CUDAExtension\n"
                                                              "CUDAExtension('x._C', ['x.cu'])\n"), [], "build.py")


def test_the_fast_hadamard_transform_import_is_a_kernel_error():
    found = line_codes(ENGINE, "utils/utils.py", """\
        import torch
        from fast_hadamard_transform import hadamard_transform
        from utils.hadamard_utils import random_hadamard_matrix
        """)
    assert (2, "NPU379") in found and not [c for line, c in found if line == 3], found


def test_workdir_up_and_down_inside_a_cloned_flash_attention_tree(tmp_path):
    text = """\
        FROM nvcr.io/nvidia/pytorch:23.07-py3
        RUN git clone https://github.com/Dao-AILab/flash-attention
        WORKDIR flash-attention
        WORKDIR csrc/rotary
        RUN pip install .
        WORKDIR ../layer_norm
        RUN pip install .
        WORKDIR ../../..
        RUN pip install .
        """
    found = line_codes(ENGINE, "Dockerfile", text)
    builds = {line for line, code in found if code in ("NPU361", "NPU809")}
    # lines 5 and 7 build the clone's csrc folders (t16f: reported as those folders' own fused-op packages, NPU809);
    # `../../..` leaves the clone (line 9 builds the image's own folder)
    assert {5, 7} <= builds and 9 not in builds, found


def test_fp8_switches_on_a_launch_line():
    found = line_codes(ENGINE, "scripts/run_single_poor.sh", """\
        # --use-fp8 halves the memory
        python3 hymm_sp/sample_gpu_poor.py \\
            --input 'assets/test.csv' \\
            --use-fp8 \\
            --infer-min
        python3 hymm_sp/sample_gpu_poor.py --input 'assets/test.csv' --use-fp8=false
        """)
    assert (4, "NPU216") in found and not [c for line, c in found if line in (1, 6) and c == "NPU216"], found


def test_a_config_dtype_written_as_torchs_name():
    assert (4, "NPU212") in line_codes(ENGINE, "configs/model/sana-1.6b.yaml", """\
        pipeline:
          name: sana-1.6b-1024px-bf16-ch5632
          path: Lawrence-cj/Sana_1600M_1024px_BF16_diffusers_ch5632
          dtype: torch.bfloat16
        """)
    assert not line_codes(ENGINE, "configs/__default__.yaml", "pipeline:\n  dtype: torch.float16\n")


def test_macos_requirements_are_another_platforms_file():
    from auditor.project import analyze_project_file

    text = ("--extra-index-url https://download.pytorch.org/whl/cu121\n"
            "torch --pre --extra-index-url https://download.pytorch.org/whl/nightly/cpu\n")
    assert not analyze_project_file(ENGINE, text.encode(), "requirements-mac.txt", "requirements").findings
    assert analyze_project_file(ENGINE, text.encode(), "requirements.txt", "requirements").findings


def test_an_extension_header_whose_only_cuda_is_the_tensor_check():
    header = """\
        #pragma once
        #include <torch/extension.h>
        #include <cstdint>

        #define div_ceil(M, N) (((M) + (N)-1) / (N))

        #define CHECK_CUDA(x) \\
          TORCH_CHECK(x.is_cuda(), "Tensor " #x " must be on CUDA")
        #define CHECK_CONTIGUOUS(x) \\
          TORCH_CHECK(x.is_contiguous(), "Tensor " #x " must be contiguous")
        """
    assert line_codes(ENGINE, "csrc/pytorch_extensions_utils.cuh", header) == [(8, "NPU372")]
    # a header of plain C++ (a comment naming is_cuda() is not code) stays unreported
    assert not line_codes(ENGINE, "csrc/enums.cuh", "#pragma once\n// x.is_cuda() is checked by the caller\n"
                                                    "#include <string>\nenum class Mode { kA, kB };\n")


def test_pip_install_of_a_variable_holding_a_cloned_attention_tree():
    found = line_codes(ENGINE, "scripts/install_acceleration.sh", """\
        install_spargeattn() {
            local package="${SPARGEATTN_PACKAGE:-}"
            if [[ -z "${package}" ]]; then
                package="${BUILD_ROOT}/SpargeAttn"
            fi
            MAX_JOBS=8 python -m pip install --no-build-isolation "${package}"
        }
        install_local() {
            local package="${BUILD_ROOT}/ltx-core"
            python -m pip install --no-build-isolation "${package}"
        }
        """)
    # the SpargeAttn folder is its source tree; a folder of the project's own is not a CUDA project's
    assert (6, "NPU361") in found and not [c for line, c in found if line == 10], found
