"""Project-file families left on every earlier split (issue 15, t15k; every split is tuned on): a file for another
accelerator holds no finding, pip requirement lists in a `requirements/` folder and `pyproject-*.toml` are read,
and `uv sync --extra X` is resolved against the project's own extras (also when an extra lists other extras of the
project). Each test is a realistic file written for the test, with lines that must and must not be found."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.project import another_backends_file, project_kind
from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


ROCM_DOCKERFILE = """\
    ARG BASE_IMAGE=rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0
    FROM ${BASE_IMAGE}

    # FlashAttention for MI300 (CK backend)
    RUN git clone https://github.com/Dao-AILab/flash-attention.git /opt/flash-attention \\
        && cd /opt/flash-attention && git checkout v2.7.4 \\
        && GPU_ARCHS="gfx942" MAX_JOBS=32 pip install --no-build-isolation -e .

    # Transformer Engine, ROCm fork
    RUN git clone --recursive https://github.com/ROCm/TransformerEngine.git /opt/te \\
        && cd /opt/te && NVTE_FRAMEWORK=pytorch NVTE_ROCM_ARCH=gfx942 NVTE_USE_HIPBLASLT=1 pip install -e .

    ENV NCCL_DEBUG=WARN
    RUN pip install transformer-engine==1.11 deepspeed==0.15.4
    """

TPU_CONFIG = """\
    defaults:
      - /model: llama3_8b
    model:
      dtype: bfloat16
      flash_attention: true
      scan_layers: true
    trainer:
      accelerator: tpu
      devices: 8
      precision: bf16-true
    """


def test_a_file_named_for_another_accelerator_holds_no_finding():
    # the same Dockerfile: for the CUDA image (no backend in its name) it is a port's work, for MI300X it is not
    assert found("docker/Dockerfile", ROCM_DOCKERFILE)
    for rel in ("docker/Dockerfile.mi300x", "docker/rocm/Dockerfile", "docker/amd/Dockerfile",
                "docker/Dockerfile.rocm"):
        assert found(rel, ROCM_DOCKERFILE) == [], rel
    # a TPU experiment's config: `flash_attention: true` there selects torch_xla's Pallas kernel
    assert found("configs/experiment/llama3_8b.yaml", TPU_CONFIG)
    assert found("configs/experiment/llama3_8b_tpu.yaml", TPU_CONFIG) == []
    requirements = "torch==2.5.1\nflash-attn==2.7.4.post1\nvllm==0.7.3\n"
    assert found("requirements.txt", requirements)
    assert found("requirements-rocm.txt", requirements) == []
    assert found("requirements/xpu.txt", requirements) == []


def test_paths_that_name_cuda_too_or_no_accelerator_are_read():
    assert not another_backends_file("docker/Dockerfile.amd64")          # x86-64, not AMD's GPU stack
    assert not another_backends_file("docker/Dockerfile.rocm-cuda")      # names CUDA as well
    assert not another_backends_file("examples/npu/run_sft.sh")          # Ascend's own
    assert not another_backends_file("tools/chip_info.sh")                # `hip` inside a word
    assert not another_backends_file("configs/intel/v2-inference-bf16.yaml")   # a CPU vendor's folder
    assert another_backends_file("scripts/xpu/run_lora.sh")
    assert another_backends_file("environment-mps.yml")
    assert found("docker/Dockerfile.amd64", ROCM_DOCKERFILE)


def test_requirement_lists_in_a_requirements_folder_are_read():
    assert project_kind("cuda.txt", "requirements/cuda.txt") == "requirements"
    assert project_kind("runtime.txt", "requirements/runtime.txt") == "requirements"
    assert project_kind("mminstall.txt", "requirements/mminstall.txt") == "requirements"
    assert project_kind("build.in", "reqs/build.in") == "requirements"
    assert project_kind("README.txt", "requirements/README.txt") is None
    assert project_kind("CMakeLists.txt", "requirements/CMakeLists.txt") == "cmake"
    assert project_kind("notes.txt", "docs/notes.txt") is None
    cuda = """\
        # Common dependencies
        -r common.txt

        numba == 0.61.2
        # Dependencies for NVIDIA GPUs
        ray[cgraph]>=2.48.0
        torch==2.8.0
        xformers==0.0.32.post1; platform_system == 'Linux' and platform_machine == 'x86_64'
        flashinfer-python==0.2.14.post1
        """
    got = found("requirements/cuda.txt", cuda)
    lines = {ln for ln, _ in got}
    assert 8 in lines and 9 in lines           # xformers, FlashInfer: CUDA kernels
    assert not lines & {1, 2, 4, 5}            # comments, the include, numba


def test_a_named_pyproject_of_one_optional_stack_is_read():
    assert project_kind("pyproject-flashattention.toml", "requirements/pyproject-flashattention.toml") == "pyproject"
    poetry = """\
        [tool.poetry]
        name = "trainer-flashattention"
        version = "0.1.0"
        description = "Flash Attention requirements"

        [tool.poetry.dependencies]
        python = "^3.10"
        flash-attn = "2.6.3"

        [build-system]
        requires = ["poetry-core>=1.0.0"]
        build-backend = "poetry.core.masonry.api"
        """
    got = found("requirements/pyproject-flashattention.toml", poetry)
    assert [ln for ln, _ in got] == [8]


def _uv_tree(root: Path) -> Path:
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "robot-policies"
        version = "0.4.0"
        dependencies = ["torch>=2.2", "numpy", "einops"]

        [project.optional-dependencies]
        viz = ["rerun-sdk>=0.24"]
        training = ["accelerate>=1.0", "wandb>=0.19"]
        kernels = ["flash-attn>=2.7.0; sys_platform == 'linux'", "triton>=3.0"]
        docs = ["mkdocs"]
        all = [
            "robot-policies[viz]",
            "robot_policies[training,kernels]",
            "pytest>=8",
        ]
        """))
    wf = root / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "full_tests.yml").write_text(textwrap.dedent("""\
        name: Full tests
        on: [push]
        jobs:
          gpu-tests:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
              - uses: astral-sh/setup-uv@v6
              - name: Install with every extra
                run: uv sync --locked --extra all
              - name: Docs
                run: uv sync --extra docs
              - name: Test
                run: uv run --extra training pytest tests -x
        """))
    return root


def test_uv_sync_of_an_extra_that_lists_the_projects_own_extras(tmp_path):
    from auditor.runner import run_static

    run = run_static([_uv_tree(tmp_path)], jobs=1)
    got = {(Path(r.path).name, f.line): f for r in run.results for f in r.findings if f.code == "NPU023"}
    assert set(got) == {("full_tests.yml", 10)}, got          # `all` -> robot_policies[kernels] -> flash-attn
    f = got[("full_tests.yml", 10)]
    assert "flash-attn" in f.message and "`all` extra" in f.message
    assert f.col == 39 and f.end_col == 42                    # the extra's name (1-based)


def test_own_extra_references_expand_without_looping():
    from auditor.project.local_extras import _own_extras_expanded

    table = {"a": ["pkg[b]", "x"], "b": ["pkg[a,c]", "y"], "c": ["flash-attn"]}
    assert sorted(_own_extras_expanded(table, "a", "pkg")) == ["flash-attn", "x", "y"]
    assert _own_extras_expanded(table, "missing", "pkg") == []
    assert _own_extras_expanded({"a": ["other[b]"]}, "a", "pkg") == ["other[b]"]   # another project's extra


DEFORMABLE_OPS_SETUP = """\
    import glob
    import os

    import torch
    from setuptools import find_packages, setup
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

    requirements = ["torch", "torchvision"]


    def get_extensions():
        this_dir = os.path.dirname(os.path.abspath(__file__))
        extensions_dir = os.path.join(this_dir, "src")
        sources = glob.glob(os.path.join(extensions_dir, "*.cpp"))
        source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))
        extension = CppExtension
        define_macros = []
        if torch.cuda.is_available() and CUDA_HOME is not None:
            extension = CUDAExtension
            sources += source_cuda
            define_macros += [("WITH_CUDA", None)]
        else:
            raise NotImplementedError("Cuda is not available")
        return [extension("MultiScaleDeformableAttention", sources, define_macros=define_macros)]


    setup(name="MultiScaleDeformableAttention", version="1.0", packages=find_packages(exclude=("configs", "tests")),
          ext_modules=get_extensions(), cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension})
    """


def test_setup_py_that_raises_in_the_branch_taken_without_cuda():
    # Deformable-DETR's ops: the test `torch.cuda.is_available() and CUDA_HOME is not None` is the error (NPU002);
    # its `else: raise` is the same construct and no second finding (test6 labels such a raise `none`)
    got = found("models/ops/setup.py", DEFORMABLE_OPS_SETUP)
    assert (18, "NPU002") in got
    assert "NPU080" not in [c for _, c in got]
    lookup = DEFORMABLE_OPS_SETUP.replace("if torch.cuda.is_available() and CUDA_HOME is not None:",
                                          "if CUDA_HOME is not None:          # the toolkit only")
    got = found("models/ops/setup.py", lookup)
    assert (23, "NPU080") in got                      # a warning's test (NPU371): the raise makes it fail
    assert [c for ln, c in got if c == "NPU080"] == ["NPU080"]
    # another vendor's copy of the same script (FlagPerf's `training/iluvatar/`): not Ascend's to change
    assert "NPU080" not in [c for _, c in found("training/iluvatar/ops/setup.py", lookup)]
    arch = """\
        import os
        import torch
        from setuptools import setup

        if "TCNN_CUDA_ARCHITECTURES" in os.environ and os.environ["TCNN_CUDA_ARCHITECTURES"]:
            compute_capabilities = [int(x) for x in os.environ["TCNN_CUDA_ARCHITECTURES"].split(",")]
        elif torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            compute_capabilities = [major * 10 + minor]
        else:
            raise EnvironmentError("Unknown compute capability. Set TCNN_CUDA_ARCHITECTURES.")
        if torch.utils.cpp_extension.CUDA_HOME is None:
            raise RuntimeError("nvcc was not found")
        setup(name="tinycudann")
        """
    got = found("bindings/torch/setup.py", arch)
    assert (13, "NPU080") in got                      # under `CUDA_HOME is None`
    assert (11, "NPU080") not in got                  # the chain's `elif torch.cuda.is_available()` is the error


def test_setup_py_raises_that_ascend_does_not_reach_are_not_reported():
    checks = """\
        import subprocess
        import sys

        import torch
        from setuptools import setup
        from torch.utils.cpp_extension import CUDA_HOME

        if "--cuda_ext" in sys.argv:
            sys.argv.remove("--cuda_ext")
            if CUDA_HOME is None:
                raise RuntimeError("--cuda_ext was requested, but nvcc was not found.")
        if torch.cuda.is_available():
            backend = "cuda"
        elif hasattr(torch, "npu") and torch.npu.is_available():
            backend = "npu"
        else:
            raise RuntimeError("no accelerator: install torch with CUDA or torch_npu")
        if CUDA_HOME is not None:
            version = subprocess.check_output([CUDA_HOME + "/bin/nvcc", "--version"], text=True)
            if "release 11.0" in version:
                raise RuntimeError("CUDA 11.0 is too old")
        setup(name="ops")
        """
    assert "NPU080" not in [c for _, c in found("setup.py", checks)]


SINGULARITY_RECIPE = """\
    Bootstrap: docker
    From: nvcr.io/nvidia/pytorch:24.05-py3

    %labels
        maintainer hpc-team
        cuda cu124
        built_for H100

    %environment
        export NCCL_IB_DISABLE=0
        export OMP_NUM_THREADS=8

    %post
        # flash-attn needs the CUDA toolkit of the base image
        apt-get update -y && apt-get install -y libaio-dev
        pip install --no-cache-dir flash-attn==2.6.3 --no-build-isolation
        pip install -r /opt/requirements.txt

    %runscript
        exec torchrun --nproc_per_node=8 train.py "$@"
    """


def test_an_apptainer_recipe_is_read_like_a_dockerfile():
    for name in ("containers/train.def", "Singularity", "containers/Singularity.gpu", "Apptainer"):
        assert project_kind(name.rsplit("/", 1)[-1], name) == "apptainer", name
    got = found("containers/train.def", SINGULARITY_RECIPE)
    lines = {ln for ln, _ in got}
    assert 2 in lines                  # the NVIDIA PyTorch base image
    assert 10 in lines                 # NCCL_IB_DISABLE in %environment
    assert 16 in lines                 # flash-attn built in %post
    assert not lines & {5, 6, 7, 14}   # labels, the comment


def test_a_def_file_that_is_no_recipe_holds_nothing():
    xmacro = """\
        // CUDA_HANDLE(name, type): the CUDA handles the runtime keeps
        CUDA_HANDLE(cublas, cublasHandle_t)
        CUDA_HANDLE(cudnn, cudnnHandle_t)
        """
    assert found("csrc/handles.def", xmacro) == []
    assert found("lib/exports.def", "LIBRARY nvtool\nEXPORTS\n    cudaInit\n") == []
    assert project_kind("singularity.py", "tools/singularity.py") is None
    result = ENGINE.analyze_bytes(b"\x00\x01Bootstrap: docker\x00", "bad.def")
    assert result.error is not None and not result.findings


def _fastchat_tree(root: Path) -> Path:
    train = root / "fastchat" / "train"
    train.mkdir(parents=True)
    (train / "__init__.py").write_text("")
    (train / "llama_flash_attn_monkey_patch.py").write_text(textwrap.dedent("""\
        from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func
        import transformers


        def replace_llama_attn_with_flash_attn():
            transformers.models.llama.modeling_llama.LlamaAttention.forward = forward
        """))
    (train / "train_mem.py").write_text(textwrap.dedent("""\
        # Make it more memory efficient by monkey patching the LLaMA model with FlashAttn.

        # Need to call this before importing transformers.
        from fastchat.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

        replace_llama_attn_with_flash_attn()

        from fastchat.train.train import train

        if __name__ == "__main__":
            train()
        """))
    body = "\n".join(f"    step_{i} = {i}" for i in range(40))
    (train / "train.py").write_text(
        "from fastchat.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n\n\n"
        f"def train():\n{body}\n    replace_llama_attn_with_flash_attn()\n")
    scripts = root / "scripts"
    scripts.mkdir()
    (scripts / "train_vicuna_7b.sh").write_text(textwrap.dedent("""\
        #!/bin/bash
        cd /path/to/FastChat
        # deepspeed fastchat/train/train_mem.py --help
        HF_DATASETS_OFFLINE=1 deepspeed fastchat/train/train_mem.py \\
            --model_name_or_path lmsys/vicuna-7b-v1.5 \\
            --bf16 True --output_dir ./checkpoints
        torchrun --nproc_per_node=8 --master_port=20001 fastchat/train/train.py \\
            --model_name_or_path lmsys/vicuna-7b-v1.5
        python -m fastchat.train.train_mem --model_name_or_path lmsys/vicuna-7b-v1.5
        """))
    return root


def test_a_launch_of_an_attention_wrapper_is_reported_on_the_launch_line(tmp_path):
    from auditor.runner import run_static

    run = run_static([_fastchat_tree(tmp_path)], jobs=1)
    got = {(Path(r.path).name, f.line): f for r in run.results for f in r.findings if f.code == "NPU312"}
    # the wrapper only: not the long train.py (its own lines are where the port is), not a comment; `python -m
    # fastchat.train.train_mem` runs the same wrapper (t17a: a module launch is the file of its dotted path)
    assert set(got) == {("train_vicuna_7b.sh", 4), ("train_vicuna_7b.sh", 9)}, got
    f = got[("train_vicuna_7b.sh", 4)]
    assert f.category == "attention" and f.severity == "info"
    assert "fastchat/train/train_mem.py" in f.message


def test_launched_call_reads_the_path():
    from auditor.project.launched import launched_call

    assert launched_call(["--num_gpus", "4", "llava/train/train_mem.py", "--bf16"], "") == \
        {"file": "llava/train/train_mem.py"}
    assert launched_call(["train_mem.py"], "scripts") == {"file": "scripts/train_mem.py"}
    assert launched_call(["train_mem.py"], "/workspace/app") == {"file": "train_mem.py"}
    # t17a: a module run with `-m` is the file of its dotted path (resolved against the tree later; `-m pip` finds none)
    assert launched_call(["-m", "fastchat.train.train_mem"], "") == {"file": "fastchat/train/train_mem.py"}
    assert launched_call(["-m", "torch.distributed.launch", "--nproc_per_node", "8", "train.py"], "") == \
        {"file": "train.py"}
    assert launched_call(["-c", "import x; x.main()"], "") is None
    assert launched_call(["$ROOT/train_mem.py"], "") is None
    assert launched_call(["--config=x.py"], "") is None
