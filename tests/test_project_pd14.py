"""pd14 (issue 15, project test24 / test25 after the draw): a command line held in a variable and run by `eval`, pip
path items without `./` in a conda environment, `torch::kCUDA` in an extension's host code."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())

# 3DGS submodules/simple-knn/setup.py, shortened
_CUDA_SETUP = """\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    setup(
        name="simple_knn",
        ext_modules=[CUDAExtension(name="simple_knn._C", sources=["spatial.cu", "simple_knn.cu", "ext.cpp"])],
        cmdclass={"build_ext": BuildExtension})
    """


def test_command_line_run_by_eval_is_read_in_place():
    # hallo3 scripts/finetune_multi_gpus_s1.sh
    script = textwrap.dedent("""\
        #! /bin/bash
        run_cmd="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torchrun --standalone --nproc_per_node=8 train_video.py"

        echo ${run_cmd}
        eval ${run_cmd}
        """)
    assert (2, "NPU004") in line_codes(ENGINE, "scripts/finetune.sh", script)
    # the same string only printed, never run: not a setting
    printed = script.replace("eval ${run_cmd}\n", "")
    assert (2, "NPU004") not in line_codes(ENGINE, "scripts/finetune.sh", printed)


def test_pip_path_items_without_dot_slash_are_local_builds(tmp_path):
    from auditor.runner import run_static

    # Scaffold-GS environment.yml: `- submodules/diff-gaussian-rasterization` in the pip list
    for folder in ("submodules/simple-knn", "submodules/plain"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "submodules/simple-knn/setup.py").write_text(textwrap.dedent(_CUDA_SETUP))
    (tmp_path / "submodules/plain/setup.py").write_text("from setuptools import setup\nsetup(name='plain')\n")
    (tmp_path / "environment.yml").write_text(textwrap.dedent("""\
        name: scaffold_gs
        dependencies:
          - python=3.7.13
          - pip
          - pip:
            - einops
            - submodules/simple-knn
            - submodules/plain
        """))
    run = run_static([tmp_path], jobs=1)
    got = {(Path(r.path).name, f.line, f.code) for r in run.results for f in r.findings}
    assert ("environment.yml", 7, "NPU370") in got, got
    assert not any(name == "environment.yml" and line == 8 for name, line, _ in got), got


def test_kcuda_in_host_code_but_not_in_comments():
    source = textwrap.dedent("""\
        #include <torch/extension.h>
        #include <cuda_runtime_api.h>
        // buffers live on torch::kCUDA
        torch::Tensor alloc(const torch::Tensor& means3D) {
          torch::Device device(torch::kCUDA);
          TORCH_CHECK(means3D.device().type() == at::DeviceType::CUDA, "at::kCUDA input");
          return torch::empty({0}, torch::TensorOptions(torch::kByte).device(device));
        }
        """)
    result = ENGINE.analyze_bytes(source.encode(), "rasterize_points.cu")
    assert sorted((f.line, f.col) for f in result.findings if f.code == "NPU045") == [(5, 24), (6, 42)]
