"""Project-file false classes of the precision draw heldout7 (issue 11, t15i; heldout7 is TUNED ON from then on):
per-vendor data catalogs (an entry a vendor key restricts to NVIDIA or AMD, the `cuda` member of a per-backend map,
a ROCm image), shell and Dockerfile lines behind a CUDA test the tool did not read (a `torch.version.cuda` probe), an
NVIDIA tool whose failure a pipeline masks, a CUDA-named variable that is a Slurm partition name, Ascend debug switches
kept quiet or set on purpose, and the Hugging Face `kernels` loader. Each test is a realistic file written for the
test (none is copied from the draw's trees), with the lines that keep their finding and the lines that lose it."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def by_line(name: str, text: str) -> dict[int, list]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    out: dict[int, list] = {}
    for f in result.findings:
        out.setdefault(f.line, []).append(f)
    return out


def severities(found: dict[int, list], line: int, code: str) -> list[str]:
    return [f.severity for f in found.get(line, []) if f.code == code]


MODEL_CATALOG = """\
    # Deployable model specs: the scheduler keeps the specs whose gpu_filters match the worker's devices.
    - name: Qwen3-32B
      description: Dense 32B chat model.
      categories:
        - llm
      specs:
        # Ascend NPUs
        - mode: standard
          quantization: BF16
          gpu_filters:
            vendor: ascend
          source: huggingface
          huggingface_repo_id: Qwen/Qwen3-32B
          backend: MindIE
        # NVIDIA GPUs with FP8 tensor cores
        - mode: standard
          quantization: FP8
          gpu_filters:
            vendor: nvidia
            compute_capability: ">=8.9"
          source: huggingface
          huggingface_repo_id: Qwen/Qwen3-32B-FP8
          backend: vLLM
    - name: Mistral-Small-FP8
      specs:
        # no filter: offered to every worker
        - mode: standard
          quantization: FP8
          source: huggingface
          huggingface_repo_id: mistralai/Mistral-Small-FP8
          backend: vLLM
    """


def test_catalog_spec_restricted_to_nvidia_is_another_backends_entry():
    found = by_line("assets/model-catalog.yaml", MODEL_CATALOG)
    assert severities(found, 17, "NPU216") == ["info"]          # gpu_filters.vendor: nvidia
    assert "gpu_filters.vendor: nvidia" in found[17][0].message
    assert found[17][0].data.get("context") == "other-backend"
    assert severities(found, 28, "NPU216") == ["error"]         # unfiltered: offered to Ascend workers too


TEMPLATES = """\
    templates:
      - name: pytorch-2-8-cuda-12-9
        displayName: PyTorch 2.8 + CUDA 12.9
        manufacturer: nvidia
        spec:
          image: nvcr.io/nvidia/pytorch:25.08-py3
          command: ["sleep", "infinity"]
      - name: pytorch-2-8-rocm-6-4
        displayName: PyTorch 2.8 + ROCm 6.4
        manufacturer: amd
        spec:
          image: rocm/pytorch:rocm6.4_ubuntu22.04_py3.10_pytorch_release_2.8.0
      - name: pytorch-2-6-cann-8-2
        displayName: PyTorch 2.6 + CANN 8.2
        manufacturer: ascend
        spec:
          image: quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11
      - name: notebook-any
        spec:
          image: nvcr.io/nvidia/pytorch:25.08-py3
    """


def test_instance_templates_per_manufacturer():
    found = by_line("assets/instance-templates.yaml", TEMPLATES)
    assert severities(found, 6, "NPU016") == ["info"]           # manufacturer: nvidia
    assert severities(found, 12, "NPU016") == ["info"]          # manufacturer: amd (and a ROCm image)
    assert "ROCm" not in found[12][0].message or "not a CUDA one" in found[12][0].message
    assert 17 not in found                                      # the CANN image
    assert severities(found, 20, "NPU016") == ["error"]         # no manufacturer: every worker gets it


def test_rocm_image_in_a_compose_file_is_not_a_cuda_image():
    compose = """\
        services:
          trainer-amd:
            image: rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0
            devices: [/dev/kfd, /dev/dri]
          trainer:
            image: nvcr.io/nvidia/pytorch:24.05-py3
        """
    found = by_line("docker-compose.yml", compose)
    assert severities(found, 3, "NPU016") == ["info"]
    assert "not a CUDA one" in found[3][0].message
    assert severities(found, 6, "NPU016") == ["error"]


BACKENDS = """\
    - backend_name: llama-box
      version_configs:
        v0.0.150-cuda:
          image_name: registry.example.com/llama-box:v0.0.150-cuda12.4
          custom_framework: cuda
        v0.0.150-cann:
          image_name: registry.example.com/llama-box:v0.0.150-cann8.1
          custom_framework: cann
      framework_index_map:
        cuda:
        - v0.0.150-cuda
        cann:
        - v0.0.150-cann
      toolkit_versions:
        cuda: "12.4"
        cann: "8.1.RC1"
    - backend_name: fastkernels-serve
      version_configs:
        0.2.0-sm90:
          image_name: registry.example.com/fks:0.2.0-sm90-cu128
          custom_framework: cuda
      framework_index_map:
        cuda:
        - 0.2.0-sm90
    """


def test_per_backend_maps_and_framework_keyed_versions():
    found = by_line("assets/inference-backends.yaml", BACKENDS)
    assert severities(found, 4, "NPU016") == ["info"]           # custom_framework: cuda
    assert 7 not in found                                       # the CANN build
    assert all(f.severity == "info" for ln in (10, 11, 15, 23, 24) for f in found.get(ln, []))
    assert severities(found, 15, "NPU018") == ["info"]          # the CUDA member beside a CANN one, as information
    assert not any(f.code == "NPU018" for f in found.get(24, []))   # `0.2.0-sm90` is the backend's version, not CUDA's


def test_profiler_switches_are_not_a_per_backend_map():
    config = """\
        profiler:
          enabled: True
          cpu: True
          cuda: True
        device: cuda
        """
    found = by_line("configs/llama3_lora.yaml", config)
    assert severities(found, 4, "NPU019") == ["warning"]
    assert severities(found, 5, "NPU019") == ["error"]


def test_dockerfile_run_behind_a_torch_cuda_probe_is_gated():
    dockerfile = """\
        FROM ubuntu:22.04
        RUN pip install torch==2.6.0 numpy
        # FA2 only for CUDA 12 builds of torch
        RUN if [ "$(python -c 'import torch; print(torch.version.cuda.split(".")[0])')" = "12" ]; then \\
              pip install flash-attn==2.7.4.post1 --no-build-isolation; \\
            fi
        RUN pip install xformers==0.0.29
        """
    found = by_line("docker/Dockerfile", dockerfile)
    assert severities(found, 5, "NPU361") == ["warning"]
    assert "runs only where CUDA is present" in found[5][0].message
    assert severities(found, 7, "NPU361") == ["error"]


def test_shell_probe_negated_or_false_is_not_a_gate():
    script = """\
        #!/bin/bash
        if [ "$(python -c 'import torch; print(torch.cuda.is_available())')" = "False" ]; then
            pip install flash-attn
        fi
        """
    assert severities(by_line("install.sh", script), 3, "NPU361") == ["error"]


NVLINK = """\
    #!/bin/bash
    {set_line}
    NVLINK_COUNT=$(nvidia-smi topo -m 2>/dev/null | grep -o 'NV[0-9][0-9]*' | wc -l)
    if [ "$NVLINK_COUNT" -gt 0 ]; then HAS_NVLINK=1; else HAS_NVLINK=0; fi
    export NCCL_NVLS_ENABLE=${{HAS_NVLINK}}
    GPUS=$(nvidia-smi --list-gpus | wc -l)
    nvidia-smi
    """


def test_nvidia_tool_masked_by_a_pipeline_without_pipefail():
    found = by_line("scripts/run-train.sh", NVLINK.format(set_line="set -ex"))
    assert severities(found, 3, "NPU017") == ["warning"]
    assert "pipefail" in found[3][0].message
    assert severities(found, 6, "NPU017") == ["warning"]
    assert severities(found, 7, "NPU017") == ["error"]          # run on its own: fails under set -e


def test_nvidia_tool_in_a_pipeline_with_pipefail_still_fails():
    found = by_line("scripts/run-train.sh", NVLINK.format(set_line="set -euo pipefail"))
    assert severities(found, 3, "NPU017") == ["error"]
    assert severities(found, 6, "NPU017") == ["error"]


def test_cuda_named_slurm_partition_is_not_a_cuda_variable():
    workflow = """\
        name: nv-ci
        on: [push]
        jobs:
          test:
            runs-on: slurm-login
            env:
              CUDA_QUEUE: "gpu_dev"
              CUDA_LAUNCH_BLOCKING: "1"
            steps:
              - run: |
                  srun --job-name=ci --partition=${CUDA_QUEUE} --gres=gpu:2 bash tests/run.sh
        """
    found = by_line(".github/workflows/nv.yml", workflow)
    assert not any(f.code == "NPU004" and f.symbol == "CUDA_QUEUE" for fs in found.values() for f in fs)
    assert any(f.symbol == "CUDA_LAUNCH_BLOCKING" for f in found.get(8, []))


def test_ascend_debug_switches_quiet_or_on_purpose():
    script = """\
        #!/bin/bash
        source /usr/local/Ascend/ascend-toolkit/set_env.sh
        export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}
        if [ "${ENFORCE_EAGER:-0}" = "1" ]; then
            export ASCEND_LAUNCH_BLOCKING=1
        fi
        export ASCEND_GLOBAL_LOG_LEVEL=1
        python -m serve --model "$MODEL"
        """
    found = by_line("serve_npu.sh", script)
    assert 3 not in found
    assert severities(found, 5, "NPU700") == ["info"]
    assert severities(found, 7, "NPU700") == ["warning"]


def test_hf_kernels_loader_pin_is_information():
    script = """\
        #!/bin/bash
        pip install "kernels<0.15.0"
        pip install "liger-kernel==0.6.2"
        """
    found = by_line("build_env.sh", script)
    assert severities(found, 2, "NPU360") == ["info"]
    assert "NPU backend" in found[2][0].message and "runs GPU kernels through CUDA" not in found[2][0].message
    assert severities(found, 3, "NPU360") == ["warning"]


def test_a_single_vendor_choice_is_not_a_catalog_entry():
    config = """\
        cluster:
          gpu_vendor: nvidia
          image: nvcr.io/nvidia/pytorch:24.05-py3
          nodes: 4
        """
    found = by_line("deploy/cluster.yaml", config)
    assert severities(found, 3, "NPU016") == ["error"]
