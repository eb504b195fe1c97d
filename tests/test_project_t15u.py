"""Project-file families behind the misses of the first run on split tuned_t15u (issue 15, t15u: a fresh tuning
sample of ten repositories; tuned on that split): each test is a realistic snippet, written after the repository's
own file, with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())

# FoundationPose bundlesdf/mycuda/setup.py: two CUDAExtensions, no condition
_CUDA_SETUP = """\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    nvcc_flags = ['-Xcompiler', '-O3', '-std=c++14']
    setup(
        name='common',
        ext_modules=[
            CUDAExtension('common', ['bindings.cpp', 'common.cu'], extra_compile_args={'nvcc': nvcc_flags}),
        ],
        cmdclass={'build_ext': BuildExtension})
    """
# an opt-in CUDA build: only when the user asks for it
_OPT_IN_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    if os.getenv("BUILD_CUDA_EXT", "0") == "1":
        ext = CUDAExtension("ops._C", ["src/ops.cpp", "src/ops_kernel.cu"])
    else:
        ext = CppExtension("ops._C", ["src/ops.cpp"])
    setup(name="ops", ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
    """


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _tree_findings(root: Path, code: str) -> dict[tuple[str, int], object]:
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    return {(Path(r.path).name, f.line): f for r in run.results for f in r.findings
            if f.code == code and Path(r.path).name != "setup.py"}     # (the setup.py files' own findings)


def test_builds_of_the_projects_own_cuda_extension_folders(tmp_path):
    # FoundationPose build_all_conda.sh / build_all.sh and Pointcept environment.yml: the project's own extension
    # folders, installed after a `cd` (literal, or below the script's own folder held in a variable) or from a conda
    # environment's pip list
    _write(tmp_path, "bundlesdf/mycuda/setup.py", _CUDA_SETUP)
    _write(tmp_path, "libs/pointops/setup.py", _CUDA_SETUP)
    _write(tmp_path, "libs/optin/setup.py", _OPT_IN_SETUP)
    _write(tmp_path, "build_all_conda.sh", """\
        PROJ_ROOT=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd )
        # Install mycuda
        cd ${PROJ_ROOT}/bundlesdf/mycuda && \\
        rm -rf build *egg* *.so && \\
        python -m pip install -e .
        cd ${PROJ_ROOT}
        """)
    _write(tmp_path, "build_all.sh", """\
        DIR=$(pwd)
        cd $DIR/bundlesdf/mycuda && rm -rf build *egg* && pip install -e .
        cd $DIR/libs/optin && pip install -e .
        """)
    _write(tmp_path, "scripts/install.sh", """\
        cd libs/pointops
        python setup.py install
        cd ../..
        pip install ./libs/optin
        """)
    _write(tmp_path, "environment.yml", """\
        name: pointcept
        channels:
          - conda-forge
        dependencies:
          - python=3.10
          - pip
          - pip:
            - einops
            - ./libs/pointops
            - ./libs/optin
        """)
    got = _tree_findings(tmp_path, "NPU370")
    assert set(got) == {("build_all_conda.sh", 5), ("build_all.sh", 2), ("install.sh", 2), ("environment.yml", 9)}, got
    f = got[("environment.yml", 9)]
    assert f.category == "kernel" and f.severity == "error" and "libs/pointops/setup.py" in f.message


def test_a_clone_or_an_unknown_folder_is_not_read_as_the_projects_own(tmp_path):
    # the same folder name cloned from elsewhere is that project's build, not this tree's setup.py; a folder outside
    # the tree (absolute WORKDIR) is not looked up
    _write(tmp_path, "mycuda/setup.py", _CUDA_SETUP)
    _write(tmp_path, "install.sh", """\
        git clone https://github.com/example/mycuda
        cd mycuda && pip install -e .
        """)
    _write(tmp_path, "Dockerfile", """\
        FROM python:3.10
        WORKDIR /opt/mycuda
        RUN pip install -e .
        """)
    assert not _tree_findings(tmp_path, "NPU370")


def test_local_build_call_reads_the_folder():
    from auditor.project.local_builds import local_build_call

    assert local_build_call(".", "libs/ext") == {"dir": "libs/ext"}
    assert local_build_call("./libs/ext/", "") == {"dir": "libs/ext"}
    assert local_build_call(".", None, "bundlesdf/mycuda") == {"dir": "bundlesdf/mycuda"}
    # the calling script's own folder (t20b); local_build_findings skips the tree root's setup.py, a file of its own
    assert local_build_call(".", "") == {"dir": "."}
    assert local_build_call(".", "/app") is None and local_build_call("$SRC", "") is None
    assert local_build_call("../other", "") is None


def test_unconditional_cuda_extensions():
    import ast

    from auditor.project.setup_py import unconditional_cuda_extensions

    assert [c.lineno for c in unconditional_cuda_extensions(ast.parse(textwrap.dedent(_CUDA_SETUP)))] == [8]
    assert unconditional_cuda_extensions(ast.parse(textwrap.dedent(_OPT_IN_SETUP))) == []
    guarded = "from torch.utils.cpp_extension import CUDAExtension\ntry:\n    ext = [CUDAExtension('a', ['a.cu'])]\n" \
              "except Exception:\n    ext = []\n"
    assert unconditional_cuda_extensions(ast.parse(guarded)) == []


def test_cutlass_location_in_a_launch_script():
    # RoboticsDiffusionTransformer pretrain.sh: NCCL settings, the CUTLASS checkout DeepSpeed's kernels build from
    script = """\
        export NCCL_IB_DISABLE=0
        export NCCL_DEBUG=INFO
        export TEXT_ENCODER_NAME="google/t5-v1_1-xxl"
        export CFLAGS="-I/usr/include"
        export CUTLASS_PATH="/path/to/cutlass"
        export WANDB_PROJECT="robotics_diffusion_transformer"
        # For run in a single node/machine
        deepspeed --hostfile=hostfile.txt main.py --deepspeed="./configs/zero2.json" --mixed_precision="bf16"
        """
    got = found("pretrain.sh", script)
    assert (5, "NPU367") in got
    assert not [f for f in got if f[0] in (3, 4, 6, 7)]


def test_gputil_pin_and_mmdetection3d_forced_cuda_build():
    # FoundationPose requirements.txt pins GPUtil (it runs nvidia-smi)
    got = found("requirements.txt", "pyglet==1.5.28\nGPUtil==1.4.0\nimgaug==0.4.0\n")
    assert got == [(2, "NPU440")]
    # UniAD docker/Dockerfile: mmdetection3d v0.17 cloned and built with FORCE_CUDA on (its setup.py reads it)
    dockerfile = """\
        FROM python:3.8
        ENV FORCE_CUDA="1"
        RUN git clone --branch v0.17.1 --single-branch https://github.com/open-mmlab/mmdetection3d.git
        WORKDIR /mmdetection3d
        RUN pip install --no-cache-dir -v -e .
        WORKDIR /
        RUN git clone https://github.com/example/plainpkg.git
        WORKDIR /plainpkg
        RUN pip install -e .
        """
    got = found("docker/Dockerfile", dockerfile)
    assert (5, "NPU355") in got and not [f for f in got if f[0] == 9]
