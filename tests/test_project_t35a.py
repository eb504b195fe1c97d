"""t35a (issue 15, session 34; project test61 / test62 / test65, TUNED): pixi manifests, CUDA tags after a torch
tag, extras named by a build argument, bare CUDA build arguments, Helm image blocks, KubeAI engines, Shifter modules,
fused-ssim / fused-bilagrid, NVIDIA DeepStream."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _audit(name: str, text: str) -> list[tuple[str, int, str]]:
    result = _ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol) for f in result.findings]


def _lines(name: str, text: str) -> set[int]:
    return {line for _code, line, _symbol in _audit(name, text)}


# graph_weather's pyproject.toml (t35a, project test65): a pixi manifest with cpu / cuda / mlx features
_PIXI_PYPROJECT = """\
    [project]
    name = "graph_weather"
    dependencies = ["torch-harmonics"]

    [tool.pixi.project]
    channels = ["conda-forge"]
    platforms = ["linux-64", "osx-arm64"]

    [tool.pixi.feature.cuda]
    channels = ["nvidia",]

    [tool.pixi.feature.cuda.system-requirements]
    cuda = "12"

    [tool.pixi.feature.cuda.target.linux-64.dependencies]
    cuda-version = "==12.8"

    #[tool.pixi.feature.cuda.target.linux-64.pypi-dependencies]
    #natten = {url = "https://shi-labs.com/natten/wheels/cu124/torch2.4.0/natten-0.17.4%2Btorch240cu124-cp312-cp312-linux_x86_64.whl"}

    [tool.pixi.feature.mlx]
    system-requirements = {macos = "13.5"}

    [tool.pixi.dependencies]
    python = "3.12.*"
    xarray = "*"

    [tool.pixi.feature.cuda.pypi-dependencies]
    torch = { version = ">=2.7.0", index = "https://download.pytorch.org/whl/cu128" }
    torchvision = {version = "*", index = "https://download.pytorch.org/whl/cu128"}

    [tool.pixi.feature.cpu.pypi-dependencies]
    torch = { version = ">=2.7.0", index = "https://download.pytorch.org/whl/cpu" }
    torchvision = {version = "*", index = "https://download.pytorch.org/whl/cpu"}

    [tool.pixi.environments]
    default = ["cpu"]
    cuda = ["cuda"]

    [tool.pixi.tasks]
    installnat = "pip install natten"
    installnatcuda = "pip install natten==0.20.1+torch270cu128 -f https://whl.natten.org"
    installpyg = "pip install pyg_lib torch_scatter -f https://data.pyg.org/whl/torch-2.7.0+cpu.html"
    installpygcuda = "pip install pyg_lib torch_scatter -f https://data.pyg.org/whl/torch-2.7.0+cuda128.html"
    test = "pytest"
    """


def test_pixi_features_channels_system_requirements_dependencies_indexes_and_tasks():
    found = _audit("pyproject.toml", _PIXI_PYPROJECT)
    assert ("NPU018", 10, "channel:nvidia") in found
    assert ("NPU018", 13, "cuda") in found                        # system requirement: a CUDA driver
    assert ("NPU018", 16, "cuda-version") in found
    assert ("NPU018", 29, "index:https://download.pytorch.org/whl/cu128") in found
    assert ("NPU018", 30, "index:https://download.pytorch.org/whl/cu128") in found
    assert ("NPU440", 42, "cuda-build:natten") in found           # `+torch270cu128`: the CUDA build
    assert ("NPU018", 44, "index:https://data.pyg.org/whl/torch-2.7.0+cuda128.html") in found
    # the conda-forge channel, comments, the mlx feature's macOS requirement, the CPU feature's torch from the CPU
    # index, the environments' names, the CPU pyg page and plain tasks are quiet
    assert {line for _c, line, _s in found} == {10, 13, 16, 29, 30, 42, 44}


def test_pixi_toml_reads_the_same_tables_without_the_prefix():
    assert _audit("pixi.toml", """\
        [workspace]
        name = "trainer"
        channels = ["conda-forge", "nvidia"]
        platforms = ["linux-64"]

        [system-requirements]
        cuda = "12.4"

        [dependencies]
        python = ">=3.10"
        pytorch-cuda = "12.4.*"

        [feature.cpu.dependencies]
        cpuonly = "*"
        """) == [("NPU018", 3, "channel:nvidia"), ("NPU018", 7, "cuda"), ("NPU018", 11, "pytorch-cuda")]
    # no pixi section: a plain pyproject is read as before
    assert _audit("pyproject.toml", """\
        [project]
        name = "x"
        dependencies = ["numpy"]

        [tool.ruff]
        line-length = 120
        """) == []


def test_cuda_tag_after_a_torch_tag_in_a_local_version():
    assert _audit("requirements.txt", """\
        natten==0.17.4+torch240cu124
        torch-scatter==2.1.2+pt21cu121
        natten==0.17.4+torch240cpu
        """) == [("NPU440", 1, "cuda-build:natten"), ("NPU440", 2, "cuda-build:torch-scatter")]


# ColabFold's Dockerfile (t35a, project test65): the CUDA variant held in a build argument
def test_extras_named_by_a_build_argument_and_bare_cuda_build_arguments():
    found = _audit("Dockerfile", """\
        ARG CUDA
        FROM nvidia/cuda:${CUDA}-base-ubuntu22.04 AS builder
        FROM debian:trixie-slim
        ARG CUDA=cuda12
        ARG CUDA_ARCH_LIST
        RUN pip install --no-cache-dir \\
                ".[alphafold,openmm]" \\
                "jax[${CUDA}]<0.11" \\
                "openmm[${CUDA}]"; \\
            rm -rf /root/.cache/pip
        RUN pip install "jax[${ACCEL}]" "flax[${CUDA_EXTRA}]"
        """)
    assert ("NPU018", 1, "CUDA") in found                          # `ARG CUDA` without a default
    assert ("NPU018", 4, "CUDA=cuda12") in found
    assert ("NPU023", 8, "extra:cuda12") in found and ("NPU023", 9, "extra:cuda12") in found
    # an arch list (the environment rules' line), own extras, unassigned variables
    assert not any(line in (5, 7, 11) for code, line, _s in found if code in ("NPU018", "NPU023"))
    # a bare switch is no CUDA version
    assert _audit("Dockerfile", "FROM ubuntu:22.04\nARG USE_CUDA\nARG WITH_CUDA\n") == []
    # a variable the Dockerfile sets to a CPU variant names no CUDA extra
    assert _audit("Dockerfile", """\
        FROM debian:trixie-slim
        ARG ACCEL=cpu
        RUN pip install "jax[${ACCEL}]"
        """) == []


# the vLLM production-stack's Helm values (t35a, project test62): images named by `repository:` beside `tag:`
def test_helm_image_blocks_name_the_image_the_chart_runs():
    assert _audit("values-03-match-pv.yaml", """\
        servingEngineSpec:
          runtimeClassName: ""
          modelSpec:
          - name: "llama3"
            repository: "vllm/vllm-openai"
            tag: "latest"
            modelURL: "meta-llama/Llama-3.1-8B-Instruct"
          - name: "opt"
            repository: "lmcache/vllm-openai"
            tag: "latest"
        routerSpec:
          repository: "lmcache/lmstack-router"
          tag: "latest"
        """) == [("NPU016", 5, "vllm/vllm-openai"), ("NPU016", 9, "lmcache/vllm-openai")]
    # a repository with no tag (a LoRA adapter's Hugging Face repository), a login's registry: not images
    assert _audit("loraadapter.yaml", """\
        spec:
          adapterSource:
            type: huggingface
            repository: "nvidia/llama-3.1-nemoguard-8b-topic-control"
        login:
          repository: nvcr.io
          username: ${NGC_API_USERNAME}
        """) == []


# KubeAI's Model resources (t35a, project test62)
def test_kubeai_vllm_engine():
    assert _audit("model.yaml", """\
        apiVersion: kubeai.org/v1
        kind: Model
        metadata:
          name: llama-3.1-8b-instruct-fp8-l4
        spec:
          url: hf://neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8
          engine: VLLM
          # engine: OLlama
          resourceProfile: nvidia-gpu-l4:1
        """) == [("NPU447", 7, "spec.engine: VLLM"), ("NPU017", 9, "spec.resourceProfile: nvidia-gpu-l4:1")]
    assert _audit("model.yaml", """\
        kind: Model
        spec:
          engine: OLlama
          resourceProfile: cpu:1
        """) == []


# sc23-dl-tutorial's and FourCastNet's NERSC job scripts (t35a, project test61 / test65)
def test_shifter_gpu_and_nccl_modules():
    found = _audit("submit_pm.sh", """\
        #!/bin/bash
        #SBATCH --image=nersc/pytorch:24.06.01
        #SBATCH --module=gpu,nccl-2.18
        # shifter --module gpu is needed for the GPUs
        srun -u shifter --module gpu --env PYTHONUSERBASE=$HOME/.local bash -c "python train.py"
        python -m torch.distributed.run --nproc_per_node=auto --module se3_transformer.runtime.training
        echo "use --module=gpu"
        """)
    assert [(code, line) for code, line, _s in found if code == "NPU029"] == [("NPU029", 3), ("NPU029", 5)]


# gsplat's examples/requirements.txt (t35a, project test65)
def test_fused_ssim_and_bilagrid_from_git():
    assert _audit("requirements.txt", """\
        # fused-ssim speeds up the SSIM loss
        git+https://github.com/rahul-goel/fused-ssim@a7c48d6dd7ac6dc39a7958c7c4452e0b10418f38
        git+https://github.com/harry7557558/fused-bilagrid@49f0ef06c9f81810fb9b5dd9027cf1844950cc16
        pytorch-msssim
        """) == [("NPU440", 2, "fused-ssim"), ("NPU440", 3, "fused-bilagrid")]


# deepstream_python_apps' notebooks and apps (t35a, project test62)
_DEEPSTREAM_APP = """\
    import sys
    import gi
    gi.require_version('Gst', '1.0')
    from gi.repository import GLib, Gst
    import pyds


    def main(args):
        Gst.init(None)
        # file-source -> h264-parser -> nvh264-decoder -> nvinfer -> nvvidconv -> nvosd -> video-renderer
        source = Gst.ElementFactory.make("filesrc", "file-source")
        h264parser = Gst.ElementFactory.make("h264parse", "h264-parser")
        decoder = Gst.ElementFactory.make("nvv4l2decoder", "nvv4l2-decoder")
        streammux = Gst.ElementFactory.make("nvstreammux", "Stream-muxer")
        pgie = Gst.ElementFactory.make("nvinfer", "primary-inference")
        if not pgie:
            sys.stderr.write(" Unable to create pgie: nvinfer \\n")
        sink = Gst.ElementFactory.make(factoryname="nveglglessink", name="nvvideo-renderer")
        queue = Gst.ElementFactory.make("queue", "queue1")
        batch_meta = pyds.gst_buffer_get_nvds_batch_meta(hash(args))
        return batch_meta
    """


def test_deepstream_bindings_and_nvidia_gstreamer_elements():
    found = _audit("deepstream_test_1.py", _DEEPSTREAM_APP)
    assert sorted((code, line) for code, line, _s in found if code in ("NPU469", "NPU470")) == [
        ("NPU469", 5), ("NPU469", 20), ("NPU470", 13), ("NPU470", 14), ("NPU470", 15), ("NPU470", 18)]
    # plain GStreamer elements, comments and messages are quiet; so is a `make` of another library
    assert _audit("player.py", """\
        from gi.repository import Gst
        Gst.init(None)
        decoder = Gst.ElementFactory.make("avdec_h264", "decoder")
        sink = Gst.ElementFactory.make("autovideosink", "sink")
        print("nvinfer is DeepStream's")
        """) == []
    assert [c for c, _l, _s in _audit("build.py", """\
        import factory
        part = factory.make("nvinfer")
        """) if c in ("NPU469", "NPU470")] == []


def _notebook(*cells: list[str]) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": source} for source in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


# ColabFold's RoseTTAFold.ipynb (t35a, project test65): Colab's `%shell` and IPython's `%pip` line magics
def test_notebook_pip_conda_and_shell_line_magics_are_read_as_shell_lines():
    found = _audit("demo.ipynb", _notebook(
        ["%pip install flash-attn --no-build-isolation\n",
         "%shell pip install -q dgl-cu113 -f https://data.dgl.ai/wheels/repo.html\n",
         "%conda install -y -c nvidia cuda-toolkit\n",
         "%matplotlib inline\n",
         "# %pip install xformers\n",
         "print('%pip install flash-attn')\n"]))
    codes = {(code, symbol) for code, _line, symbol in found}
    assert {("NPU361", "flash-attn"), ("NPU440", "dgl-cu113")} <= codes
    assert any(symbol == "channel:nvidia" or symbol == "cuda-toolkit" for _c, _l, symbol in found)
    assert not any(symbol == "xformers" for _c, _l, symbol in found)    # a comment
    lines = {symbol: line for _c, line, symbol in found}
    # the JSON line of each source line: 7 + its index (the cell's `"source": [` opens on line 7)
    assert lines["flash-attn"] < lines["dgl-cu113"]
