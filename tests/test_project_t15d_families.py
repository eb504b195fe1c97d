"""Project-file families behind the misses of the first run on split tuned_t15d (issue 15, t15d: a fresh tuning
sample of fifteen repositories; tuned on that split): each test is a realistic snippet with the lines that must be
found and the lines that must not."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_pip_install_from_a_cuda_projects_repository_is_that_project():
    # mistral-inference deploy/Dockerfile: MegaBlocks and vLLM built from their git repositories
    dockerfile = """\
        FROM --platform=amd64 nvcr.io/nvidia/cuda:12.1.0-devel-ubuntu22.04 as base
        WORKDIR /workspace
        RUN pip3 install "torch==2.1.1"
        # This build is slow but NVIDIA does not provide binaries. Increase MAX_JOBS as needed.
        RUN pip3 install "git+https://github.com/stanford-futuredata/megablocks.git"
        RUN pip3 install "git+https://github.com/vllm-project/vllm.git"
        RUN pip3 install git+https://github.com/huggingface/transformers.git@v4.36.0 "fschat[model_worker]==0.2.34"
        RUN pip3 install git+https://github.com/NVIDIA/apex.git
        """
    got = found("deploy/Dockerfile", dockerfile)
    assert (5, "NPU440") in got and (6, "NPU440") in got
    assert not [f for f in got if f[0] in (4, 7)]          # a comment; transformers runs on Ascend as it is
    assert [f for f in got if f[0] == 8] == [(8, "NPU362")]   # apex's URL: reported once, by the URL's own pattern
    script = """\
        #!/bin/bash
        set -e
        pip install -U git+https://github.com/facebookresearch/xformers.git@main#egg=xformers
        pip install git+https://github.com/state-spaces/mamba.git@v2.2.2 --no-build-isolation
        pip install "git+https://github.com/openai/CLIP.git"
        pip install git+https://github.com/${FORK}/vllm.git
        """
    got = found("scripts/install.sh", script)
    assert (3, "NPU361") in got and (4, "NPU440") in got
    assert not [f for f in got if f[0] in (5, 6)]          # CLIP is no CUDA project; an unknown owner is unknown


def test_another_vendors_fork_of_a_cuda_project_is_not_reported_as_the_cuda_build():
    script = """\
        if [ "$GPU_VENDOR" = "amd" ]; then
          pip install git+https://github.com/ROCm/flash-attention.git@v2.6.3-cktile
        else
          pip install git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3
        fi
        """
    got = found("install_deps.sh", script)
    assert not [f for f in got if f[0] == 2]
    assert (4, "NPU361") in got
    requirements = """\
        numpy
        git+https://github.com/ROCm/flash-attention.git@v2.6.3-cktile
        git+https://github.com/vllm-project/vllm.git@v0.6.3
        """
    # (a file named for the other vendor, `requirements-rocm.txt`, holds no finding at all since t15k: here the
    # fork sits in the project's shared requirements)
    assert found("requirements-extra.txt", requirements) == [(3, "NPU440")]


def test_a_platforms_list_of_pip_requirements_is_read_as_requirements():
    # BLIP's cog.yaml: Replicate Cog's `build.python_packages`
    cog = """\
        build:
          gpu: true
          cuda: "11.1"
          python_version: "3.8"
          system_packages:
            - "libgl1-mesa-glx"
            - "libglib2.0-0"
          python_packages:
            - "ipython==7.30.1"
            - "torchvision==0.11.1"
            - "torch==1.10.0"
            - "xformers==0.0.16"
            - "timm==0.4.12"

        predict: "predict.py:Predictor"
        """
    got = found("cog.yaml", cog)
    assert (11, "NPU011") in got and (12, "NPU361") in got
    assert not [f for f in got if f[0] in (6, 7, 9, 10, 13, 15)]
    # Ray's runtime_env (`pip:` as a list or as `pip: {packages: [...]}`) and BentoML's bentofile `python.packages`
    ray = """\
        working_dir: ./
        pip:
          packages:
            - flash-attn==2.5.8
            - numpy
          pip_check: false
        """
    assert found("runtime_env.yaml", ray) == [(4, "NPU361")]
    bento = """\
        service: "service:svc"
        include:
          - "*.py"
        python:
          packages:
            - torch==2.1.0+cu121
            - bitsandbytes
        """
    got = found("bentofile.yaml", bento)
    assert [c for ln, c in got if ln == 6] and (7, "NPU440") in got
    assert not [f for f in got if f[0] == 3]


def test_package_names_in_other_lists_are_not_requirements():
    # pre-commit's `additional_dependencies` (type stubs for a hook), a project's own `packages:` setting and a
    # multi-line item are not pip requirement lists
    precommit = """\
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v1.8.0
            hooks:
              - id: mypy
                additional_dependencies: [torch, types-requests]
        """
    assert found(".pre-commit-config.yaml", precommit) == []
    config = """\
        build:
          packages:
            - torch
            - vllm
        """
    assert found("build_config.yaml", config) == []


def test_the_all_builds_page_with_cpu_pins_installs_the_cpu_build():
    # LoRA's ONNX notebook (after Hugging Face's): `torch==1.6.0+cpu ... -f .../torch_stable.html` asks PyTorch's
    # page of every build for the CPU wheels; the pin still needs its torch-npu (info), the index is no CUDA install
    notebook_line = ("!{sys.executable} -m pip install --upgrade torch==1.6.0+cpu torchvision==0.7.0+cpu "
                     "-f https://download.pytorch.org/whl/torch_stable.html\n")
    script = "#!/bin/bash\n" + notebook_line.lstrip("!").replace("{sys.executable}", "python") + \
        "pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 -f https://download.pytorch.org/whl/torch_stable.html\n" \
        "pip install torch==1.7.1 -f https://download.pytorch.org/whl/torch_stable.html\n"
    got = found("ci/install_cpu.sh", script)
    assert [c for ln, c in got if ln == 2] == ["NPU011"]
    assert [c for ln, c in got if ln == 3].count("NPU018") == 3      # two CUDA pins and the page
    assert "NPU018" in [c for ln, c in got if ln == 4]               # no local version: PyPI's default is a CUDA build
    cpu = """\
        -f https://download.pytorch.org/whl/torch_stable.html
        torch==1.8.1+cpu
        torchvision==0.9.1+cpu
        numpy
        """
    assert found("requirements-cpu.txt", cpu) == [(2, "NPU011")]
    cuda = """\
        -f https://download.pytorch.org/whl/torch_stable.html
        torch==1.8.1+cu111
        """
    assert found("requirements.txt", cuda) == [(1, "NPU018"), (2, "NPU018")]
