"""tp48a (session 48, project test132): families the project-file readers missed on session 47's blind project split
test132 (HPC software stacks with Spack, ComfyUI deployments, Ray notebooks, TorchDynamo benchmarks, FastChat-style
launches). Recall: Spack specs asking for CUDA builds (NPU922) or NVIDIA's HPC SDK compilers (NPU923), comfy-cli's
`install --nvidia` (NPU924), TorchDynamo's nvFuser backends by name (NPU925), ComfyUI-Manager snapshots' pip pins,
a bare `ARG CUDA_VERSION_FOR_COMFY`, NVIDIA's pytorch-quantization, a Ray runtime environment's pip list built in
Python, a notebook switch handed to Ray Train's `ScalingConfig(use_gpu=use_gpu)` (the switch itself quiet, lead
decision 47), and an attention wrapper's launch reported on the line naming the wrapper. Shaped on spack-configs,
worker-comfyui, transformer-deploy, ai-on-gke's Ray notebooks and LLMZoo; each with controls."""
from __future__ import annotations

import json
from pathlib import Path

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree


SPACK_ENV = """\
spack:
  view: false
  definitions:
  - nvhpc_compilers: ['%nvhpc@22.5']
  - gcc_specs:
    - amrex@22.11
    - slate@2022.07.0 ~cuda
    # - ginkgo@1.4.0 +cuda cuda_arch=80
  - cuda_specs:
    - adios2@2.8.3 +cuda cuda_arch=80   # ecp-data-vis-sdk
    - cabana@0.5.0 +cuda ^kokkos@3.7.00 +wrapper +cuda_lambda +cuda cuda_arch=80
    - kokkos@3.7.00 +wrapper cuda_arch=80
    - hypre@2.26.0 ~cuda +rocm amdgpu_target=gfx90a
  specs:
  - matrix:
    - [$cuda_specs]
    - [$gcc_compilers]
  - py-torch@2.1.0 cuda=True
"""


def test_spack_environment_specs(tmp_path):
    found = audit_file(tmp_path, "perlmutter/e4s/spack.yaml", SPACK_ENV)
    assert codes_of_line(found, 4) == {"NPU923"}                # `%nvhpc@22.5`: NVIDIA's HPC SDK compilers
    for line in (10, 11, 12, 18):                               # `+cuda`, `cuda_arch=80`, `cuda=True`
        assert codes_of_line(found, line) == {"NPU922"}, line
    # a plain spec, CUDA off, a commented-out spec, a ROCm build, the list's name and its reference in a matrix
    for line in (6, 7, 8, 9, 13, 16, 17):
        assert not codes_of_line(found, line), line
    assert sum(1 for ln, code, _ in found if ln == 10 and code == "NPU922") == 1     # `+cuda cuda_arch=80`: one


SPACK_PACKAGES = """\
packages:
  all:
    compiler: [gcc@11.2.0]
    providers:
      mpi: [openmpi]
  opencv:
    variants: +core~cuda~dnn+eigen~gtk+highgui
  suite-sparse:
    version: [5.1.0]
    variants: +cuda~openmp+pic~tbb
  hdf5:
    require: "+mpi ~cuda"
  petsc:
    require:
    - one_of: ["+cuda cuda_arch=90", "+rocm"]
  cuda:
    buildable: false
    externals:
    - spec: cuda@12.2.0
      prefix: /usr/local/cuda-12.2
"""

SPACK_COMPILERS = """\
compilers:
  - compiler:
      spec: nvhpc@23.9
      paths:
        cc: /opt/nvidia/hpc_sdk/Linux_x86_64/23.9/compilers/bin/nvc
        cxx: /opt/nvidia/hpc_sdk/Linux_x86_64/23.9/compilers/bin/nvc++
      modules:
      - PrgEnv-nvhpc
  - compiler:
      spec: gcc@11.2.0
      paths:
        cc: /usr/bin/gcc
"""

# another tool's `packages:` and a compose-like file: no Spack schema, nothing read as a spec
NOT_SPACK = """\
packages:
  - name: amrex+cuda
    version: "+cuda"
variants: +cuda
"""


def test_spack_packages_and_compilers_scopes(tmp_path):
    found = audit_file(tmp_path, "site/packages.yaml", SPACK_PACKAGES)
    assert codes_of_line(found, 10) == {"NPU922"}               # `variants: +cuda~openmp...`
    assert codes_of_line(found, 15) == {"NPU922"}               # a require's `one_of` choice
    for line in (3, 7, 12):                                     # gcc, `~cuda` variants and requirement
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "c", "site/compilers.yaml", SPACK_COMPILERS)
    assert codes_of_line(found, 3) == {"NPU923"}
    for line in (5, 6, 8, 10):                                  # the entry's paths and modules; gcc
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "n", "deploy/packages.yaml", NOT_SPACK)
    assert not {code for _, code, _ in found} & {"NPU922", "NPU923"}, found


def _snapshot(pips: dict[str, str]) -> str:
    return json.dumps({"comfyui": "4ac401af2b3962f7a669a6757a804f7773833c47",
                       "git_custom_nodes": {"https://github.com/ltdrdata/ComfyUI-Manager": {
                           "hash": "b6a8e6ba8147080a320b1b91c93a0b1cbdb93136", "disabled": False}},
                       "file_custom_nodes": [{"filename": "websocket_image_save.py", "disabled": False}],
                       "pips": pips}, indent=2) + "\n"


def test_comfyui_manager_snapshot_pips(tmp_path):
    text = _snapshot({"numpy==1.26.2": "", "nvidia-cublas-cu12==12.1.3.1": "", "nvidia-cudnn-cu12==8.9.2.26": "",
                      "torch==2.1.1": ""})
    lines = text.splitlines()
    found = audit_file(tmp_path, "snapshots/2024-05-01_12-00-00_snapshot.json", text)
    for needle, code in (("nvidia-cublas", "NPU440"), ("nvidia-cudnn", "NPU440"), ('"torch==', "NPU011")):
        line = next(i for i, t in enumerate(lines, 1) if needle in t)
        assert code in codes_of_line(found, line), (needle, found)
    assert not codes_of_line(found, next(i for i, t in enumerate(lines, 1) if "numpy" in t))
    # a JSON named for a snapshot that is not ComfyUI-Manager's: data, nothing read
    other = json.dumps({"device": "cuda", "requirements": ["nvidia-cublas-cu12==12.1.3.1"]}, indent=2) + "\n"
    assert audit_file(tmp_path / "o", "tests/__snapshots__/api_snapshot.json", other) == []


def test_snapshot_is_chosen_by_its_schema_and_malformed_lookalikes_are_no_error():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    engine = StaticEngine(load_rules())
    # review48 item 2 (p8): JSON lines and JSON with comments named for a snapshot are a test's data, never an error
    for rel, text in (("tests/snapshots/events.json", '{"event": "start", "device": "cuda"}\n{"event": "stop"}\n'),
                      ("src/page_snapshot.json", '{\n  // recorded page\n  "title": "cuda",\n}\n')):
        result = engine.analyze_bytes(text.encode(), rel)
        assert result.error is None and result.findings == [], (rel, result.error, result.findings)
    # the schema under another name (a restore file beside the Dockerfile) is still read
    text = _snapshot({"nvidia-cudnn-cu12==8.9.2.26": ""})
    result = engine.analyze_bytes(text.encode(), "configs/restore.json")
    assert "NPU440" in {f.code for f in result.findings}


COMFY_DOCKERFILE = """\
ARG BASE_IMAGE=ubuntu:24.04
FROM ${BASE_IMAGE} AS base
ARG COMFYUI_VERSION=latest
ARG CUDA_VERSION_FOR_COMFY
ARG ENABLE_PYTORCH_UPGRADE=false
RUN uv pip install comfy-cli pip setuptools wheel
RUN if [ -n "${CUDA_VERSION_FOR_COMFY}" ]; then \\
      /usr/bin/yes | comfy --workspace /comfyui install --version "${COMFYUI_VERSION}" --cuda-version "${CUDA_VERSION_FOR_COMFY}" --nvidia; \\
    else \\
      /usr/bin/yes | comfy --workspace /comfyui install --version "${COMFYUI_VERSION}" --nvidia; \\
    fi
# comfy install --nvidia for the GPU image
RUN /usr/bin/yes | comfy --workspace /cpu install --cpu
RUN pip3 install sentence-transformers notebook pytorch-quantization ipywidgets --no-cache-dir
"""


def test_comfy_cli_installs_and_cuda_arguments(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", COMFY_DOCKERFILE)
    assert "NPU018" in codes_of_line(found, 4)                  # a bare CUDA version argument, named for its use
    assert "NPU924" in codes_of_line(found, 8)
    assert codes_of_line(found, 10) == {"NPU924"}               # `comfy install --nvidia`
    assert "NPU440" in codes_of_line(found, 14)                 # NVIDIA's pytorch-quantization
    for line in (3, 5, 12, 13):                                 # other arguments, a comment, the CPU install
        assert not codes_of_line(found, line), line


def _notebook(cells: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": cell.splitlines(keepends=True)} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def _line_of(root: Path, rel: str, needle: str) -> int:
    from auditor.project.notebook import notebook_code_lines

    lines = notebook_code_lines((root / rel).read_text())
    return next(i for i, t in enumerate(lines, 1) if needle in t)


def test_ray_notebook_switch_handed_to_scaling_config_and_runtime_env_pips(tmp_path):
    cells = [
        '!pip install "ray==2.6.1"\nimport ray\nfrom ray.air.config import ScalingConfig\n'
        "# If using GPUs, set this to True.\nuse_gpu = True\nnum_workers = 2\n",
        'ray.init(\n    address="ray://head:10001",\n    runtime_env={\n        "pip": [\n'
        '            "datasets",\n            "torch",\n        ]\n    }\n)\n',
        "scaling_config = ScalingConfig(num_workers=num_workers, use_gpu=use_gpu)\n",
    ]
    rel = "notebooks/ray_mnist.ipynb"
    root = write_tree(tmp_path, {rel: _notebook(cells)})
    found = tree_findings(root, rel)
    assert codes_of_line(found, _line_of(root, rel, "ScalingConfig(num_workers")) == {"NPU051"}
    assert not codes_of_line(found, _line_of(root, rel, "use_gpu = True"))     # lead decision 47: the request is the pair
    assert "NPU011" in codes_of_line(found, _line_of(root, rel, '"torch"'))
    assert not codes_of_line(found, _line_of(root, rel, '"datasets"'))
    # a switch read only by an `if` keeps its own finding (NPU053); one set False asks for nothing
    cells = ["use_gpu = True\n", "device = 'cuda' if use_gpu else 'cpu'\n",
             "from ray.train import ScalingConfig\ncfg = ScalingConfig(num_workers=2, use_gpu=use_gpu)\n"]
    found = tree_findings(write_tree(tmp_path / "b", {rel: _notebook(cells)}), rel)
    assert "NPU053" not in codes_of_line(found, 1) and "NPU051" in codes_of_line(found, 4)
    cells = ["use_gpu = True\n", "device = 'cuda' if use_gpu else 'cpu'\n"]
    found = tree_findings(write_tree(tmp_path / "c", {rel: _notebook(cells)}), rel)
    assert "NPU053" in codes_of_line(found, 1)
    cells = ["use_gpu = False\n", "from ray.train import ScalingConfig\ncfg = ScalingConfig(num_workers=2, use_gpu=use_gpu)\n"]
    found = tree_findings(write_tree(tmp_path / "d", {rel: _notebook(cells)}), rel)
    assert not {code for _, code, _ in found} & {"NPU051", "NPU053"}, found


def test_attention_wrapper_launch_reported_on_the_wrappers_line(tmp_path):
    files = {
        "llmzoo/models/llama/llama_flash_attn_monkey_patch.py": (
            "import transformers\nfrom flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func\n\n\n"
            "def forward(self, hidden_states):\n    return flash_attn_unpadded_qkvpacked_func(hidden_states)\n\n\n"
            "def replace_llama_attn_with_flash_attn():\n"
            "    transformers.models.llama.modeling_llama.LlamaAttention.forward = forward\n"),
        "train_fast.py": ("from llmzoo.models.llama.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n\n"
                          "replace_llama_attn_with_flash_attn()\n\nfrom train import train\n\n"
                          "if __name__ == \"__main__\":\n    train()\n"),
        "train.py": "def train():\n    pass\n",
        "scripts/train_chimera_7b.sh": ("model_name_or_path=llama_hf_7b\n\ntorchrun \\\n  --nnodes=1 \\\n"
                                        "  --nproc_per_node=8 \\\n  train_fast.py \\\n  --bf16 True \\\n"
                                        "  --output_dir ${output_dir}\n"),
    }
    root = write_tree(tmp_path, files)
    found = tree_findings(root, "scripts/train_chimera_7b.sh")
    assert "NPU312" in codes_of_line(found, 6), found          # `train_fast.py \\`, not `torchrun \\` (line 3)
    assert "NPU312" not in codes_of_line(found, 3)


DYNAMO = """\
import torchdynamo


def get_dynamo_optimizer(name: str):
    return torchdynamo.optimize(name)


nvfuser_ofi_inference = get_inference(context_managers=[get_dynamo_optimizer(name="nvfuser_ofi")])
nnc_inference = get_inference(context_managers=[get_dynamo_optimizer(name="nnc_ofi")])
timings["pytorch nvfuser_ofi fp32"] = benchmark(nvfuser_ofi_inference)
print("nvfuser")
if fuser == "nvfuser":
    torch._C._jit_set_nvfuser_enabled(True)
"""


def test_torchdynamo_nvfuser_backend_names(tmp_path):
    found = audit_file(tmp_path, "demo/benchmark.py", DYNAMO)
    assert codes_of_line(found, 8) == {"NPU925"}
    for line in (9, 10, 11, 12):                   # NNC (CPU / LLVM), a label, a message, a choice read
        assert "NPU925" not in codes_of_line(found, line), line


BACKEND_MENU = """\
import argparse

import torch

BACKENDS = ("inductor", "aot_eager", "nvfuser")


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="inductor", choices=["inductor", "aot_eager", "nvfuser"])
    return parser.parse_args()


def compile_model(model, backend):
    if backend not in BACKENDS:
        raise ValueError(backend)
    return torch.compile(model, backend=backend)


def nvfuser_model(model):
    return torch.compile(model, backend="nvfuser")
"""


def test_torchdynamo_backend_menu_is_no_choice(tmp_path):
    # review48 item 10 (p5): a tuple of backend names and argparse's `choices=` list options, none chosen
    found = audit_file(tmp_path, "train.py", BACKEND_MENU)
    for line in (5, 10):
        assert "NPU925" not in codes_of_line(found, line), line
    assert "NPU925" in codes_of_line(found, 21)


SPACK_SCRIPT = """\
#!/bin/bash
# spack install ginkgo +cuda cuda_arch=80
spack install -j 16 amrex@22.11 +cuda cuda_arch=80 %nvhpc@23.9
spack install hoomd-blue
spack add "kokkos@3.7.00+cuda cuda_arch=90"
spack install slate ~cuda
echo "spack install petsc +cuda"
spack install -j 16 hypre~cuda cuda_arch=none
spack spec -I trilinos ~cuda cuda_arch=none
spack install kokkos cuda_arch=90
"""


def test_spack_commands_read_as_specs(tmp_path):
    found = audit_file(tmp_path, "stacks/gpu-stack.sh", SPACK_SCRIPT)
    assert codes_of_line(found, 3) == {"NPU922", "NPU923"}
    assert codes_of_line(found, 5) == {"NPU922"}              # a variant right after the version, in quotes
    assert codes_of_line(found, 10) == {"NPU922"}             # an architecture alone asks for the CUDA build
    # a comment, a plain spec, CUDA off, a message; CUDA off beside `cuda_arch=none` (review48 item 5, p2)
    for line in (2, 4, 6, 7, 8, 9):
        assert not codes_of_line(found, line), line
