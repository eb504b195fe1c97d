"""Project files beyond Python (auditor/project/): each kind read by its real parser, findings at the right
line and column, comments never matched, fixes that keep the GPU configuration and are idempotent."""
from __future__ import annotations

import json
import textwrap

import pytest

from auditor.cli import main
from auditor.project import project_kind
from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def audit(name: str, text: str, engine: StaticEngine = ENGINE):
    result = engine.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.col, f.symbol) for f in result.findings]


def codes(name: str, text: str) -> list[str]:
    return [c for c, *_ in audit(name, text)]


@pytest.mark.parametrize("name,kind", [
    ("requirements.txt", "requirements"), ("requirements-dev.txt", "requirements"), ("requirements/base.in", None),
    ("base.in", None), ("pyproject.toml", "pyproject"), ("environment.yml", "conda"), ("Dockerfile", "dockerfile"),
    ("Dockerfile.cuda", "dockerfile"), ("train.dockerfile", "dockerfile"), ("run_pretrain.sh", "shell"),
    ("job.slurm", "shell"), ("demo.ipynb", "notebook"), ("ds_config_zero3.json", "config"),
    ("accelerate.yaml", "config"), ("package.json", None), ("train.py", None), ("kernel.cu", None),
])
def test_kinds_by_name(name, kind):
    assert project_kind(name.rsplit("/", 1)[-1]) == kind


def test_requirements_pins_with_markers_continuations_and_indexes():
    found = audit("requirements.txt", """\
        # flash-attn is optional for inference   <- a comment: never a finding
        --extra-index-url https://download.pytorch.org/whl/cu121
        torch==2.3.1+cu121
        transformers>=4.40  # flash-attn mentioned in a comment
        flash_attn==2.5.8 ; platform_system == "Linux" --hash=sha256:0123
        triton \\
            ==2.3.1
        -e ./third_party/kernels
        numpy
        """)
    assert ("NPU018", 2, 19, "index:https://download.pytorch.org/whl/cu121") in found
    assert ("NPU018", 3, 1, "torch+cu121") in found
    assert ("NPU361", 5, 1, "flash-attn") in found           # PEP 503: flash_attn is flash-attn
    assert ("NPU360", 6, 1, "triton") in found
    assert not [f for f in found if f[1] in (1, 4, 8, 9)]


def test_pyproject_dependencies_groups_and_build_requires():
    found = audit("pyproject.toml", """\
        [build-system]
        requires = ["setuptools", "torch>=2.1"]

        [project]
        name = "trainer"
        description = "no flash-attn needed"
        dependencies = [
          "torch>=2.1",
          "xformers>=0.0.26; sys_platform == 'linux'",
        ]
        [project.optional-dependencies]
        gpu = ["flash-attn>=2", "nvidia-nccl-cu12"]
        [tool.poetry.dependencies]
        python = "^3.10"
        pynvml = "*"
        """)
    assert [(c, ln, s) for c, ln, _, s in found] == [
        ("NPU011", 2, "torch"), ("NPU011", 8, "torch"),           # plain torch pins: info, torch-npu goes beside
        ("NPU361", 9, "xformers"), ("NPU361", 12, "flash-attn"), ("NPU440", 12, "nvidia-nccl-cu12"),
        ("NPU440", 15, "pynvml")]


def test_conda_environment_channels_specs_and_pip_section():
    found = audit("environment.yml", """\
        name: train
        channels: [pytorch, nvidia, conda-forge]
        dependencies:
          - python=3.10
          - pytorch::pytorch-cuda=12.1
          - cudatoolkit
          - pip:
              - deepspeed>=0.14
              - apex @ git+https://github.com/NVIDIA/apex
        """)
    assert {(c, s) for c, _, _, s in found} == {("NPU018", "channel:nvidia"), ("NPU018", "pytorch-cuda"),
                                               ("NPU018", "cudatoolkit"), ("NPU362", "apex")}


def test_shell_script_env_commands_installs_and_comments():
    found = audit("scripts/run_pretrain.sh", """\
        #!/usr/bin/env bash
        # nvidia-smi and NCCL_DEBUG in a comment are not findings
        set -euo pipefail
        export NCCL_DEBUG=INFO NCCL_IB_HCA=mlx5
        NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
        if [[ "${CUDA_VISIBLE_DEVICES:-}" == "" ]]; then
          echo "nvidia-smi says $NGPUS GPUs"
        fi
        case "$STAGE" in
          pretrain) CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=gpu pretrain.py ;;
        esac
        pip install --no-build-isolation "flash-attn>=2.5" -r requirements.txt
        python -m pip install --extra-index-url https://download.pytorch.org/whl/cu118 torch
        docker run --gpus all trainer:latest
        """)
    got = {(c, ln, s) for c, ln, _, s in found}
    assert ("NPU121", 4, "NCCL_DEBUG") in got and ("NPU121", 4, "NCCL_IB_HCA") in got
    assert ("NPU017", 5, "nvidia-smi") in got
    assert ("NPU004", 6, "CUDA_VISIBLE_DEVICES") in got
    assert ("NPU004", 10, "CUDA_VISIBLE_DEVICES") in got and ("NPU123", 10, "torchrun --nproc_per_node=gpu") in got
    assert ("NPU361", 12, "flash-attn") in got
    assert ("NPU018", 13, "index:https://download.pytorch.org/whl/cu118") in got
    assert ("NPU017", 14, "docker --gpus=all") in got
    assert not [f for f in found if f[1] in (1, 2, 7)]       # comments and an echo'd message


def test_dockerfile_base_image_env_run_and_exec_form():
    found = audit("docker/Dockerfile", """\
        ARG CUDA=12.1.1
        FROM nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu22.04 AS base
        ENV NCCL_DEBUG=INFO \\
            CUDA_HOME=/usr/local/cuda
        ENV TORCH_NCCL_BLOCKING_WAIT 1
        # RUN nvidia-smi
        RUN --mount=type=cache,target=/root/.cache pip install flash-attn && \\
            nvidia-smi
        FROM ubuntu:22.04
        CMD ["torchrun", "--nproc_per_node=gpu", "train.py"]
        """)
    got = {(c, ln, s) for c, ln, _, s in found}
    assert got == {
        ("NPU018", 1, "CUDA=12.1.1"),      # the CUDA version it builds for, as ARG CUDA_VERSION=: information
        ("NPU016", 2, "nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu22.04"), ("NPU121", 3, "NCCL_DEBUG"),
        ("NPU004", 4, "CUDA_HOME"), ("NPU120", 5, "TORCH_NCCL_BLOCKING_WAIT"), ("NPU361", 7, "flash-attn"),
        ("NPU017", 8, "nvidia-smi"), ("NPU123", 10, "torchrun --nproc_per_node=gpu")}


def test_framework_configs_yaml_and_deepspeed_json():
    found = audit("configs/train.yaml", """\
        trainer:
          accelerator: gpu
          precision: bf16-mixed
        distributed:
          backend: nccl          # nccl here is a comment
        model:
          device: "cuda:0"
          note: "device: cuda"
        env:
          NCCL_IB_DISABLE: "1"
        containers:
          - env:
              - name: CUDA_VISIBLE_DEVICES
                value: "0"
        """)
    got = {(c, ln, s) for c, ln, _, s in found}
    assert got == {("NPU020", 2, "trainer.accelerator: gpu"), ("NPU212", 3, "trainer.precision: bf16-mixed"),
                   ("NPU122", 5, "distributed.backend: nccl"), ("NPU019", 7, "model.device: cuda:0"),
                   ("NPU121", 10, "NCCL_IB_DISABLE"), ("NPU004", 13, "CUDA_VISIBLE_DEVICES")}
    ds = audit("ds_config.json", json.dumps(
        {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True}, "fp16": {"enabled": False}}, indent=2))
    assert [(c, s) for c, _, _, s in ds] == [("NPU212", "bf16.enabled: true")]


def test_bf16_config_severity_follows_the_product():
    cfg = '{"bf16": {"enabled": true}}'
    assert ENGINE.analyze_bytes(cfg.encode(), "ds_config.json").findings[0].severity == "info"
    on_910a = StaticEngine(load_rules(), product="910a")
    assert on_910a.analyze_bytes(cfg.encode(), "ds_config.json").findings[0].severity == "error"


def test_templated_and_data_yaml_do_not_fail_the_audit():
    assert ENGINE.analyze_bytes(b"image: {{ .Values.image }}\n  bad: [", "templates/deploy.yaml").error is None
    big = b"vocab:\n" + b"  - device: cuda\n" * 40000
    assert ENGINE.analyze_bytes(big, "tokenizer_config.yaml").findings == []   # data, not a config


def test_notebook_cells_map_back_to_cell_and_line(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("model.cuda() in markdown is prose"),
                nbformat.v4.new_code_cell("!nvidia-smi\n%matplotlib inline\nimport torch"),
                nbformat.v4.new_code_cell("model = Net().cuda()\nx = torch.randn(2, device='cuda')"),
                nbformat.v4.new_code_cell("%%bash\nexport NCCL_DEBUG=INFO")]
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, str(path))
    result = ENGINE.analyze_bytes(path.read_bytes(), "demo.ipynb")
    assert result.error is None
    cells = {(f.code, f.data["cell"], f.data["cell_line"], f.line) for f in result.findings}
    assert ("NPU017", 2, 1, 1) in cells
    assert ("NPU001", 3, 1, 4) in cells and ("NPU003", 3, 2, 5) in cells
    assert ("NPU121", 4, 2, 7) in cells
    assert all("[cell " in f.message for f in result.findings)
    # the console shows the cell's code line, not the notebook's JSON
    out = tmp_path / "report.txt"
    assert main([str(path), "--no-cache", "--color", "never", "--output", str(out)]) == 1
    assert "model = Net().cuda()" in out.read_text()


def test_cuda_source_inventory_ignores_comments():
    result = ENGINE.analyze_bytes(textwrap.dedent("""\
        // __global__ void commented_out(float* x) {}
        #include <cublas_v2.h>
        const char* msg = "__global__ void in_a_string()";
        __global__ void add_kernel(const float* a, float* b, int n) { b[threadIdx.x] += a[threadIdx.x]; }
        template <typename T>
        __global__ void __launch_bounds__(256) scale_kernel(T* x, T s) { asm volatile("membar.gl;"); }
        void launch(float* a, float* b, int n) { add_kernel<<<1, n>>>(a, b, n); cublasSgemm(h); }
        """).encode(), "csrc/add.cu")
    (f,) = result.findings
    assert f.code == "NPU372" and f.line == 4
    assert f.data["inventory"]["kernels"] == ["add_kernel", "scale_kernel"]
    assert f.data["inventory"]["launches"] == 1 and f.data["inventory"]["inline_asm"] == 1
    assert f.data["inventory"]["libraries"] == {"cuBLAS": 2}


def test_cuda_source_without_kernels_is_reported_at_its_cuda_include():
    # host-side .cu files (Megatron's fused-kernel launchers, detectron2's cuda_version.cu) and instantiation
    # files that include another .cu (flash-attention's hopper/instantiations): the first CUDA include
    host = textwrap.dedent("""\
        /* coding=utf-8
         * #include <cuda.h> in a comment is not an include */
        #include <ATen/ATen.h>
        #include <cuda.h>
        #include <cuda_fp16.h>
        int get_version() { return 0; }
        """)
    (f,) = ENGINE.analyze_bytes(host.encode(), "megatron/fused_kernels/softmax_cuda.cu").findings
    assert f.line == 4 and f.data["inventory"]["kernels"] == []
    (f,) = ENGINE.analyze_bytes(b"#include <cuda_runtime_api.h>\nint v() { return CUDART_VERSION; }\n",
                                "layers/csrc/cuda_version.cu").findings
    assert f.line == 1
    inst = '// Copyright (c) 2024, Tri Dao.\n// Splitting the different head dimensions.\n\n' \
           '#include "flash_fwd_hdim64_e4m3_packgqa_sm90.cu"\n#include "flash_fwd_hdim96_e4m3_packgqa_sm90.cu"\n'
    (f,) = ENGINE.analyze_bytes(inst.encode(), "hopper/instantiations/flash_fwd_hdimall_sm90.cu").findings
    assert f.line == 4
    (f,) = ENGINE.analyze_bytes(b'// generated\n\n#include "flash_bwd_launch_template.h"\n\ntemplate void run();\n',
                                "hopper/instantiations/flash_bwd_hdim96_fp16_sm90.cu").findings
    assert f.line == 3     # no CUDA header by name: the first include
    (f,) = ENGINE.analyze_bytes(b"// nothing included\nint x;\n", "empty.cu").findings
    assert f.line == 1
    aten = b'#include <ATen/ATen.h>\n#include <ATen/cuda/CUDAContext.h>\n#include "multi_tensor_apply.cuh"\n'
    (f,) = ENGINE.analyze_bytes(aten, "csrc/kernel/cuda/multi_tensor_lamb_kernel.cu").findings
    assert f.line == 2


def test_ci_gpu_machines_and_gpu_image_names():
    # Megatron-DeepSpeed's ec2-github-runner jobs, lerobot's runner groups and GPU image, an NGC-internal image
    wf = textwrap.dedent("""\
        jobs:
          start-runner:
            runs-on: ubuntu-latest
            steps:
              - uses: machulav/ec2-github-runner@v2
                with:
                  ec2-instance-type: g4dn.12xlarge
              - uses: machulav/ec2-github-runner@v2
                with:
                  ec2-instance-type: p3.8xlarge
              - uses: machulav/ec2-github-runner@v2
                with:
                  ec2-instance-type: t3.large
          gpu-tests:
            runs-on:
              group: aws-g6-4xlarge-plus
            env:
              DOCKER_IMAGE_NAME: huggingface/lerobot-gpu
              DOCKER_IMAGE_NAME_CPU: huggingface/lerobot-cpu
              DOCKER_IMAGE_NAME_GPU: huggingface/lerobot-gpu:latest
          cpu-tests:
            runs-on:
              group: aws-general-8-plus
            steps:
              - run: make test
        """)
    found = {(f.line, f.code) for f in ENGINE.analyze_bytes(wf.encode(), ".github/workflows/main.yml").findings}
    assert found == {(7, "NPU028"), (10, "NPU028"), (16, "NPU028"), (18, "NPU016"), (20, "NPU016")}
    ci = b"image: gitlab-master.nvidia.com/dl/dgx/pytorch:20.12-py3-devel\ntest:\n  script:\n    - pytest\n"
    assert [(f.line, f.code) for f in ENGINE.analyze_bytes(ci, ".gitlab-ci.yml").findings] == [(1, "NPU016")]


def test_compose_gpu_capability_without_nvidia_driver():
    compose = textwrap.dedent("""\
        services:
          triton:
            image: soar97/triton-sensevoice:24.05
            deploy:
              resources:
                reservations:
                  devices:
                    - capabilities: [ gpu ]
          web:
            image: nginx:1.25
            deploy:
              resources:
                reservations:
                  devices:
                    - capabilities: ["tpu"]
        # capabilities: [gpu] on GPU hosts only
        """)
    found = [(f.line, f.code) for f in ENGINE.analyze_bytes(compose.encode(), "docker-compose.yml").findings]
    # the image of the service reserving the GPU is a CUDA image too (t21b's NPU094; project test4 labels it device)
    assert sorted(found) == [(3, "NPU094"), (8, "NPU017")]


def test_device_list_read_through_echo_into_a_program_is_a_read_not_a_message():
    # FunASR's recipes count GPUs from the device list; an echo'd message stays a message
    script = textwrap.dedent("""\
        #!/bin/bash
        gpu_num=$(echo $CUDA_VISIBLE_DEVICES | awk -F "," '{print NF}')
        nj=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)
        echo "Using GPUs $CUDA_VISIBLE_DEVICES"
        echo "Using GPUs $CUDA_VISIBLE_DEVICES" | cat
        # gpu_num=$(echo $CUDA_VISIBLE_DEVICES | awk -F "," '{print NF}')
        for i in $(seq 0 $((gpu_num-1))); do echo $i; done
        """)
    found = [(f.line, f.code) for f in ENGINE.analyze_bytes(script.encode(), "run.sh").findings]
    assert found == [(2, "NPU004"), (3, "NPU004")]


def test_notebook_shell_escape_continued_over_lines():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        '!torchrun --nproc_per_node 2 finetune.py \\\n    --model_name_or_path "Qwen/Qwen-1_8B-Chat-Int4" \\\n'
        '    --bf16 True \\\n    --output_dir output_qwen\nbf16 = True\nprint("--device cuda:0")'))
    nb.cells.append(nbformat.v4.new_code_cell(
        "!lm_eval --model hf \\\n    --device cuda:0 \\\n    --batch_size 8"))
    result = ENGINE.analyze_bytes(nbformat.writes(nb).encode(), "finetune.ipynb")
    assert result.error is None
    found = [(f.line, f.code, f.data["cell"], f.data["cell_line"]) for f in result.findings]
    # line 5 `bf16 = True` is Python after the shell command ends: the bf16 switch (NPU246), not a shell option
    assert found == [(3, "NPU212", 1, 3), (5, "NPU246", 1, 5), (8, "NPU019", 2, 2)]


def test_bf16_optimizer_strategy_in_overrides_and_configs():
    script = textwrap.dedent("""\
        #!/bin/bash
        python3 -m verl.trainer.main \\
            config=examples/config.yaml \\
            worker.actor.optim.strategy=adamw_bf16 \\
            worker.critic.optim.strategy=adamw \\
            trainer.n_gpus_per_node=8
        # worker.actor.optim.strategy=adamw_bf16 halves the optimizer memory
        """)
    found = [(f.line, f.code) for f in ENGINE.analyze_bytes(script.encode(), "examples/grpo.sh").findings]
    assert (4, "NPU212") in found and not any(ln in (5, 7) for ln, _ in found)
    config = b"worker:\n  actor:\n    optim:\n      strategy: adamw_bf16\n  critic:\n    optim:\n      strategy: adamw\n"
    assert [(f.line, f.code) for f in ENGINE.analyze_bytes(config, "examples/config.yaml").findings] == [(4, "NPU212")]


def test_dockerfile_heredoc_runs_and_builds_inside_a_cloned_tree():
    # Qwen's Dockerfile: BuildKit `RUN <<EOF` scripts; dockerfile-parse reads their lines as instructions
    dockerfile = textwrap.dedent("""\
        FROM ubuntu:22.04
        RUN <<EOF
        if [ "$BUNDLE" = "true" ]; then
            pip3 install torch==2.0.1+cu117 torchvision==0.15.2
            test -d flash-attention || git clone -b v2.3.3 https://github.com/Dao-AILab/flash-attention
            cd /data/flash-attention &&
                pip3 install . &&
                pip3 install csrc/layer_norm
            # pip3 install "auto-gptq==0.4.2"
            echo "ENV CUDA_VISIBLE_DEVICES=0"
        fi
        EOF
        RUN python3 <<EOF
        import torch
        torch.cuda.synchronize()
        EOF
        RUN git clone https://github.com/NVIDIA/TensorRT-LLM.git && cd TensorRT-LLM && pip install -e .
        RUN git clone https://github.com/Dao-AILab/flash-attention && cd flash-attention && \\
            git clone https://github.com/example/tool && cd tool && pip install .
        """)
    found = {(f.line, f.code) for f in ENGINE.analyze_bytes(dockerfile.encode(), "docker/Dockerfile").findings}
    # line 8, `pip3 install csrc/layer_norm`: one of FlashAttention's fused kernels (t15q)
    assert {(4, "NPU018"), (5, "NPU361"), (7, "NPU361"), (8, "NPU809"), (17, "NPU440"), (18, "NPU361")} <= found
    assert not any(ln in (9, 10, 12, 19) for ln, _ in found), found   # a comment, a message; another project's tree


def test_bare_cuda_and_cudnn_version_build_arguments():
    dockerfile = textwrap.dedent("""\
        ARG PYTHON="3.10"
        ARG CUDA="10.1"
        ARG CUDNN="7"
        ARG CUDA_DEVICE_ORDER=PCI_BUS_ID
        FROM ubuntu:20.04
        # ARG CUDA="11.8"
        """)
    found = [(f.line, f.code, f.severity) for f in ENGINE.analyze_bytes(dockerfile.encode(), "docker/Dockerfile").findings
             if f.code == "NPU018"]
    assert found == [(2, "NPU018", "info"), (3, "NPU018", "info")]
    matrix = b"jobs:\n  t:\n    strategy:\n      matrix:\n        include:\n          - torch: '2.4.1'\n            cuda: '12-8'\n"
    assert [(f.line, f.code) for f in ENGINE.analyze_bytes(matrix, ".github/workflows/ci.yml").findings] == [(7, "NPU018")]
    assert not [f for f in ENGINE.analyze_bytes(b"model:\n  cuda: 0\n", "conf/model.yaml").findings if f.code == "NPU018"]


def test_option_arrays_are_read_as_the_command_options():
    # CogVideo's finetune scripts keep their options in bash arrays, expanded into `accelerate launch`
    script = textwrap.dedent("""\
        #!/bin/bash
        TRAIN_ARGS=(
            --seed 42 # random seed
            --mixed_precision "bf16"  # ["no", "fp16"] Only CogVideoX-2B supports fp16 training
            # --mixed_precision bf16
            --device cuda:0
        )
        OTHER=(--mixed_precision fp16 --device "$DEVICE" --output_dir out)
        GPUS=(0 1 2 3)
        accelerate launch train.py "${TRAIN_ARGS[@]}" "${OTHER[@]}"
        """)
    found = [(f.line, f.code) for f in ENGINE.analyze_bytes(script.encode(), "finetune/train.sh").findings]
    assert (4, "NPU212") in found and (6, "NPU019") in found
    assert not any(ln in (3, 5, 8, 9) for ln, _ in found), found


def test_fix_adds_hccl_twins_keeps_gpu_lines_and_is_idempotent(tmp_path, capsys):
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/bash\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
                      "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 train.py\n")
    cfg = tmp_path / "train.yaml"
    cfg.write_text("distributed:\n  backend: nccl   # keep this comment\nmodel:\n  device: 'cuda:1'\n")
    assert main(["fix", str(tmp_path), "--write"]) == 0
    assert script.read_text() == ("#!/bin/bash\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
                                  "export TORCH_HCCL_ASYNC_ERROR_HANDLING=1\n"
                                  "ASCEND_RT_VISIBLE_DEVICES=0,1 CUDA_VISIBLE_DEVICES=0,1 torchrun "
                                  "--nproc_per_node=2 train.py\n")
    assert "nccl" in cfg.read_text()                     # config rewrites are unsafe: not without the flag
    assert main(["fix", str(tmp_path), "--write", "--unsafe-fixes"]) == 0
    assert cfg.read_text() == "distributed:\n  backend: hccl   # keep this comment\nmodel:\n  device: 'npu:1'\n"
    before = script.read_text(), cfg.read_text()
    assert main(["fix", str(tmp_path), "--write", "--unsafe-fixes"]) == 0
    assert (script.read_text(), cfg.read_text()) == before
    capsys.readouterr()
    # the twin set, the NCCL variable is only worth knowing now
    result = ENGINE.analyze_bytes(script.read_bytes(), "launch.sh")
    assert {f.severity for f in result.findings if f.code in ("NPU120", "NPU004")} == {"info"}


def test_tree_audit_picks_up_project_files_and_honours_excludes(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("flash-attn\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "requirements.txt").write_text("flash-attn\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "run.sh").write_text("nvidia-smi\n")
    assert main([str(tmp_path), "--no-cache", "--format", "json", "--exclude", "docs"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["code"]) for f in report["findings"]] == [("requirements.txt", "NPU361")]


def test_options_take_their_values_and_slurm_directives_are_read():
    found = audit("train.sh", """\
        #!/bin/bash
        #SBATCH --gres=gpu:8                # GPUs per node
        # --bf16 in a plain comment is not an option
        unset PYTORCH_CUDA_ALLOC_CONF
        deepspeed train.py --flash_attn False --bf16 True --tf32 True
        MODEL_ARGS="--attention-backend flash --bf16"
        torchrun pretrain_gpt.py $MODEL_ARGS
        """)
    got = {(c, ln, s) for c, ln, _, s in found}
    assert ("NPU028", 2, "--gres gpu:8") in got      # a scheduler request (info), not a CUDA install
    assert not [f for f in found if f[1] == 2 and f[0] == "NPU018"]
    assert ("NPU004", 4, "PYTORCH_CUDA_ALLOC_CONF") in got
    assert not [f for f in found if f[1] == 5 and f[0] == "NPU363"]      # --flash_attn False switches it off
    # (`--tf32 True` on a command line is HF TrainingArguments' option, which raises without CUDA: NPU978, tq48b)
    assert {("NPU212", 5), ("NPU978", 5), ("NPU363", 6), ("NPU212", 6)} <= {(c, ln) for c, ln, *_ in found}
    assert not [f for f in found if f[1] == 3]


def test_negated_switches_matrix_entries_and_version_markers():
    found = audit("model_config.yaml", """\
        MODEL_ARGS:
          --no-masked-softmax-fusion: true
          --bias-gelu-fusion: true
        jobs:
          build:
            strategy:
              matrix:
                cuda_version: ["12.4", "12.8"]
        env:
          NCCL_VERSION: "2.21.5"
        optimizer: adamw_torch_8bit
        """)
    got = {(c, ln) for c, ln, *_ in found}
    assert ("NPU364", 3) in got and ("NPU364", 2) not in got            # `no_X: true` is `X: false`
    assert not [f for f in found if f[1] in (10, 11)]                   # a version marker; torchao's 8-bit AdamW
    matrix = ENGINE.analyze_bytes(b"jobs:\n  b:\n    strategy:\n      matrix:\n        cuda_version: ['12.4']\n",
                                  "ci.yml").findings
    assert [(f.code, f.severity) for f in matrix] == [("NPU018", "info")]


def test_builds_of_cuda_source_trees_by_clone_cd_workdir_and_path():
    # a clone of a CUDA project, then a build in it: the build line names the project (DeepEP, apex, ...)
    found = audit("build.sh", """\
        git clone --depth 1 https://github.com/deepseek-ai/DeepEP.git && cd DeepEP && python setup.py install
        cd /workspace && pip install -e .
        git clone https://github.com/NVIDIA/apex /src/nvapex
        pip install -v --no-build-isolation --config-settings "--build-option=--cpp_ext" /src/nvapex
        pip install --no-cache-dir --no-build-isolation /megatron/fused_kernels
        """)
    assert ("NPU440", 1, 79, "url:github.com/deepseek-ai/deepep") in found          # `python setup.py install`
    assert not [f for f in found if f[1] == 2]                                      # an unrelated tree
    assert ("NPU362", 4, 82, "url:github.com/nvidia/apex") in found
    assert ("NPU360", 5, 49, "fused-kernels") in found
    # Dockerfile: WORKDIR is where RUN starts; leading BuildKit flags over continuation lines are Docker's
    found = audit("Dockerfile", """\
        FROM ubuntu:22.04 AS deep_gemm
        ARG CODESPACE=/root/codespace
        RUN --mount=type=secret,id=HTTPS_PROXY,env=https_proxy \\
            --mount=type=secret,id=NO_PROXY,env=no_proxy \\
            pip install torch==2.6.0 \\
            -i ${PYTORCH_WHEELS_URL}/cu128
        WORKDIR ${CODESPACE}/DeepGEMM
        RUN pip wheel -w /tmp/deep_gemm -v --no-deps .
        FROM ubuntu:22.04 AS app
        RUN pip install .
        """)
    assert ("NPU018", 6, 8, "index:${PYTORCH_WHEELS_URL}/cu128") in found
    assert ("NPU440", 8, 46, "deep-gemm") in found
    assert not [f for f in found if f[1] == 10]       # a new stage starts outside the DeepGEMM tree


def test_cuda_paths_written_to_files_and_script_variables_as_settings():
    found = audit("setup_env.sh", """\
        echo "/usr/local/cuda-12.4/lib64" | sudo tee -a /etc/ld.so.conf.d/cuda.conf
        echo "export PATH=/usr/local/cuda/bin:\\$PATH" >> /etc/environment
        echo "install CUDA into /usr/local/cuda first" >&2
        export CUDA_HOME=/usr/local/cuda
        update-alternatives --set cuda /usr/local/cuda-12.4
        export ACCELERATOR=${ACCELERATOR:-"GPU"}
        DIST_BACKEND=nccl torchrun train.py
        CUDA_VERSION=12.1
        """)
    assert ("NPU027", 1, 7, "path:/usr/local/cuda-12.4") in found
    assert ("NPU027", 2, 19, "path:/usr/local/cuda") in found
    assert not [f for f in found if f[1] == 3]                                      # a message
    assert [f[0] for f in found if f[1] == 4] == ["NPU004"]                         # CUDA_HOME says it already
    assert ("NPU027", 5, 32, "path:/usr/local/cuda-12.4") in found
    assert ("NPU020", 6, 8, "ACCELERATOR=GPU") in found
    assert ("NPU122", 7, 1, "DIST_BACKEND=nccl") in found
    # a CUDA version set in a build script is a build parameter, information like `ARG CUDA_VERSION=12.1` (t15g)
    assert [f[0] for f in found if f[1] == 8] == ["NPU018"]


def test_config_install_commands_container_options_and_transformer_engine_env():
    found = audit(".github/workflows/ci.yml", """\
        jobs:
          build:
            container:
              image: ${{ matrix.container }}
              options: --gpus all --rm -v /dev/shm
        autotest:
          pip_package: pip install -e . --no-deps; pip install more-itertools triton
          description: "run pip install flash-attn first"
        ENV_VARS:
          NVTE_ALLOW_NONDETERMINISTIC_ALGO: 0
        """)
    assert ("NPU017", 5, 16, "docker --gpus=all") in found
    assert ("NPU360", 7, 71, "triton") in found
    assert not [f for f in found if f[1] == 8]
    assert ("NPU446", 10, 3, "NVTE_ALLOW_NONDETERMINISTIC_ALGO") in found


def test_conda_installs_pip_global_options_wheel_urls_and_forks_in_scripts():
    found = audit("build_conda.sh", """\
        micromamba install -n slime \\
          cuda=12.9.1 \\
          nccl \\
          -c nvidia/label/cuda-12.9.1 \\
          -c conda-forge -y
        MAX_JOBS=64 pip -v install flash-attn==2.8.3 --no-build-isolation
        pip install "https://example.org/v2.8.3/flash_attn-2.8.3%2Bcu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
        git clone https://github.com/ROCm/apex.git && cd apex && python setup.py install
        conda install numpy pip
        """)
    assert {(c, ln, s) for c, ln, _, s in found} == {
        ("NPU018", 2, "cuda"), ("NPU990", 3, "nccl"), ("NPU018", 4, "channel:nvidia"),
        ("NPU361", 6, "flash-attn"), ("NPU361", 7, "flash-attn"), ("NPU362", 8, "apex")}
    assert [f[2] for f in found if f[1] == 8] == [58]       # the fork's build (its clone alone changes nothing)


def test_conda_named_ci_workflow_is_read_as_a_config():
    found = audit(".github/workflows/conda-ci.yml", """\
        jobs:
          build-conda:
            container:
              options: --privileged --gpus all --ipc=host
            steps:
              - run: |
                  export CUDA_HOME="$CONDA_PREFIX"
        """)
    assert ("NPU017", 4, 29, "docker --gpus=all") in found
    assert ("NPU004", 7, 18, "CUDA_HOME") in found


def test_inline_python_which_dpkg_conda_channel_labels_and_dtype_settings():
    found = audit("ci.sh", """\
        python -c "import torch; print('CUDA available:', torch.cuda.is_available())"
        which nvcc
        sudo dpkg -i cuda-keyring_1.1-1_all.deb
        python -c "print('hello from cuda')"
        """)
    assert ("NPU002", 1, 51, "torch.cuda.is_available") in found
    assert ("NPU017", 2, 7, "nvcc") in found
    assert ("NPU018", 3, 14, "apt:cuda-keyring") in found
    assert not [f for f in found if f[1] == 4]
    found = audit("environment.yml", """\
        channels:
          - nvidia/label/cuda-11.8.0
          - conda-forge
        dependencies:
          - python=3.10
        """)
    assert [(c, ln) for c, ln, *_ in found] == [("NPU018", 2)]
    found = audit("recipes/configs/8B_full.yaml", """\
        dtype: bf16
        model:
          torch_dtype: bfloat16
        optimizer_dtype: fp32
        """)
    assert [(c, ln) for c, ln, *_ in found] == [("NPU212", 1), ("NPU212", 3)]


def test_notebook_device_chosen_through_torch_accelerator_is_not_a_cuda_device():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        'import torch\n'
        'device = torch.accelerator.current_accelerator().type if hasattr(torch, "accelerator") else "cuda"\n'
        'model.to(device)\n'
        'x = torch.zeros(3, device="cuda")')]
    result = ENGINE.analyze_bytes(nbformat.writes(nb).encode(), "demo.ipynb")
    found = {(f.code, f.line, f.severity) for f in result.findings}
    # the old-torch fallback is worth knowing (info); what flows from `device` is the accelerator: not reported
    assert found == {("NPU003", 2, "info"), ("NPU003", 4, "error")}


def test_docker_labels_url_variables_and_cuda_location_variables():
    found = audit("image_build.sh", """\
        export FLASH_ATTN_URL=https://github.com/Dao-AILab/flash-attention@060c918
        docker build . --build-arg FLASH_ATTN_URL=$FLASH_ATTN_URL \\
          --label "FLASH_ATTN_URL=${FLASH_ATTN_URL/@/\\/tree\\/}"
        """)
    assert {(c, ln) for c, ln, *_ in found} == {("NPU392", 1), ("NPU361", 1), ("NPU392", 2)}
    result = ENGINE.analyze_bytes(b"env_vars:\n  CUDA_TMPDIR: /tmp/cuda\n  CUDA_DEVICE_MAX_CONNECTIONS: 1\n",
                                  "runtime_env.yaml")
    assert [(f.symbol, f.severity) for f in result.findings] == [("CUDA_TMPDIR", "info"),
                                                                 ("CUDA_DEVICE_MAX_CONNECTIONS", "warning")]


def test_the_ascend_route_beside_a_cuda_package_is_information():
    # vllm-ascend's source install builds vLLM with VLLM_TARGET_DEVICE=empty; MindSpeed patches Megatron-LM
    found = ENGINE.analyze_bytes(textwrap.dedent("""\
        FROM ubuntu:22.04
        RUN git clone --depth 1 --branch v0.11.0 https://github.com/vllm-project/vllm.git && \\
            git clone https://gitcode.com/Ascend/MindSpeed.git && \\
            git clone --depth 1 --branch core_v0.12.1 https://github.com/NVIDIA/Megatron-LM.git
        RUN cd vllm && VLLM_TARGET_DEVICE=empty pip install -v -e . && cd .. && \\
            pip install vllm==0.11.0 vllm-ascend==0.11.0rc1
        """).encode(), "docker/Dockerfile.ascend").findings
    assert [(f.line, f.symbol, f.severity) for f in found] == [
        (4, "url:github.com/nvidia/megatron-lm", "info"), (6, "vllm", "info")]


def test_hydra_overrides_liger_switch_and_source_tree_paths():
    found = audit("train.sh", """\
        python train.py trainer.accelerator=gpu ++device=cuda:0 trainer.precision=bf16-mixed
        torchrun --nproc_per_node 8 finetune.py --config cfg.yaml use_liger_kernel=true
        pip install torch==2.1.0 numpy==1.26
        pip install ./third_party/flash-attention/csrc/rotary
        """)
    assert {(c, ln, s) for c, ln, _, s in found} == {
        ("NPU020", 1, "trainer.accelerator=gpu"), ("NPU019", 1, "device=cuda:0"),
        ("NPU212", 1, "trainer.precision=bf16-mixed"), ("NPU360", 2, "use_liger_kernel=true"),
        ("NPU361", 4, "url:github.com/dao-ailab/flash-attention"),
        ("NPU011", 3, "torch")}        # a plain torch pin: information (torch-npu goes beside it)
    assert codes("recipe.yaml", "use_liger_kernel: true\nprecision: amp_bf16\n") == ["NPU360", "NPU212"]


def test_compose_and_kubernetes_gpu_requests_and_find_links_pages_of_cuda_builds():
    found = audit("docker-compose.yml", """\
        services:
          trainer:
            runtime: nvidia
            deploy:
              resources:
                reservations:
                  devices:
                    - driver: nvidia
                      capabilities: [gpu]
        """)
    # `capabilities: [gpu]` is its own line to change (with or without `driver: nvidia` beside it)
    assert [(c, ln) for c, ln, *_ in found] == [("NPU017", 3), ("NPU017", 8), ("NPU017", 9)]
    assert codes("k8s/job.yaml", "spec:\n  containers:\n    - resources:\n        limits:\n          nvidia.com/gpu: 8\n") \
        == ["NPU017"]
    # (tp60a: the PyG extension listed after the page is taken from it, its CUDA build: test171's label)
    assert codes("requirements.txt", "-f https://data.pyg.org/whl/torch-2.1.0+cu121.html\ntorch-scatter\n") \
        == ["NPU018", "NPU440"]


def test_slurm_partitions_gpu_counts_cuda_modules_and_count_variables():
    found = audit("recipes/launch.slurm", """\
        #!/bin/bash
        #SBATCH --partition=hopper-prod  # Adjust this for your cluster
        #SBATCH -p gpu
        #SBATCH --gpus=8
        #SBATCH --cpus-per-task=96
        # SBATCH --partition=a100 is set by the wrapper
        set -x -e
        module load cuda/12.4
        module load gcc/11.2 cudnn/8.9.2
        GPUS_PER_NODE=8
        PARTITION=gpu-large
        srun -p $PARTITION --ntasks=8 python train.py
        srun -p dgx-a100 -G 8 python train.py
        echo "module load cuda/12.4 on the GPU nodes"
        """)
    assert {(c, ln, col, s) for c, ln, col, s in found} == {
        ("NPU028", 2, 9, "--partition hopper-prod"), ("NPU028", 3, 9, "-p gpu"), ("NPU028", 4, 9, "--gpus 8"),
        ("NPU029", 8, 13, "module load cuda/12.4"), ("NPU029", 9, 22, "module load cudnn/8.9.2"),
        ("NPU028", 11, 1, "PARTITION=gpu-large"), ("NPU028", 13, 6, "-p dgx-a100"), ("NPU028", 13, 18, "-G 8")}
    assert codes("job.sh", "#SBATCH --partition=cpu\nmodule load gcc openmpi\nmodule purge\nml python/3.11\n") == []
    assert codes("job.sh", "ml CUDA/12.1.1\nspack load cuda@12.1\n") == ["NPU029", "NPU029"]


def test_inference_engines_started_from_scripts_and_nested_bash_c():
    found = audit("serve.slurm", """\
        srun --nodes=1 --ntasks=1 --nodelist=$VLLM_NODE trl vllm-serve --model $MODEL --tensor_parallel_size $TP &
        srun --nodes=2 --ntasks=2 \\
            bash -c "python -m sglang.launch_server \\
                --model-path '$MODEL_PATH' \\
                --tp 16" &
        CUDA_VISIBLE_DEVICES=4,5 python -m vllm.entrypoints.openai.api_server --model=meta-llama/Meta-Llama-3-8B-Instruct
        lighteval vllm "$MODEL_ARGS" $TASKS --use-chat-template
        lm_eval --model vllm --model_args pretrained=$M,tensor_parallel_size=2,dtype=auto
        vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000
        """)
    launches = [(ln, col, s) for c, ln, col, s in found if c == "NPU447"]
    assert launches == [(1, 49, "trl vllm-serve"), (3, 14, "python -m sglang.launch_server"),
                        (6, 26, "python -m vllm.entrypoints.openai.api_server"), (7, 1, "lighteval vllm"),
                        (8, 9, "lm_eval --model=vllm"), (9, 1, "vllm serve")]
    assert codes("eval.sh", """\
        # vllm serve $MODEL is started on the inference node
        echo "run: python -m sglang.launch_server --model-path X"
        lighteval accelerate "$MODEL_ARGS" "$TASKS"
        python -m pip install vllm-ascend
        bash -c "python -m torch.distributed.run --nproc_per_node 8 train.py"
        """) == []


def test_key_value_lists_loop_values_comparisons_and_uv_groups():
    found = audit("evaluate.slurm", """\
        MODEL_ARGS="model_name=$MODEL_ID,revision=main,dtype=bfloat16,tensor_parallel_size=$NUM_GPUS"
        lm_eval --model hf --model_args pretrained=EleutherAI/pythia-160m,dtype=bfloat16 --batch_size 8
        for PRECISION in fp8 bf16; do python bench.py --precision $PRECISION; done
        if [[ "$DEVICE" == "cuda" ]]; then echo "GPU run"; fi
        if [ "$INSTALL_FLASHATTN" == "true" ]; then echo "flash"; fi
        uv run --frozen --no-default-groups --group dev --group cuda${CUDA_VERSION} python -m open_instruct.train
        uv sync --extra cu128
        uv sync --extra cpu --group dev
        pip install -e ".[extras]" --extra-index-url https://pypi.nvidia.com
        """)
    assert {(c, ln, col, s) for c, ln, col, s in found} == {
        ("NPU212", 1, 48, "dtype=bfloat16"), ("NPU212", 2, 67, "dtype=bfloat16"),
        ("NPU216", 3, 18, "PRECISION=fp8"), ("NPU212", 3, 22, "PRECISION=bf16"),
        ("NPU019", 4, 20, "DEVICE == cuda"), ("NPU023", 6, 57, "extra:cuda"),
        ("NPU023", 7, 17, "extra:cu128"), ("NPU026", 9, 46, "index:https://pypi.nvidia.com")}


def test_config_keys_any_case_gpu_counts_and_devcontainer_run_args():
    assert codes("linear_probing.yaml", "MODEL:\n  DEVICE: cuda\n  USE_FLASH_ATTN: True\n") == ["NPU019", "NPU363"]
    assert codes("mcli/run.yaml", "compute:\n  gpus: 8  # Number of GPUs to use\n  cluster: r1z1\n") == ["NPU028"]
    assert codes("mcli/run.yaml", "compute:\n  num_nodes: 2\n  gpus_note: eight\n") == []
    found = audit(".devcontainer/devcontainer.json", """\
        {
            // a JSON-with-comments file, as VS Code writes it
            "name": "llava",
            "hostRequirements": {"gpu": "optional"},
            "runArgs": [
                "--gpus",
                "all",
                // "--ipc",
                "--ulimit",
                "memlock=-1",
            ],
        }
        """)
    assert [(c, ln, col, s) for c, ln, col, s in found] == [
        ("NPU028", 4, 34, "hostRequirements.gpu: optional"), ("NPU017", 6, 10, "docker --gpus=all")]
    assert codes(".devcontainer/devcontainer.json", '{"runArgs": ["--ipc", "host"], /* no GPU */ "name": "x"}') == []


def test_device_and_dtype_keys_fp8_ci_runners_and_values_holding_images_urls_and_paths():
    found = audit("configs/tiny/OLMo-20M.yaml", """\
        model:
          init_device: cuda
          model_dtype: bf16
          flash_attention: false
        precision: fp8
        jobs:
          gpu_tests:
            runs-on: 4-core-ubuntu-gpu-t4
            env:
              PIP_INSTALL_ARGS: '--pre -f https://download.pytorch.org/whl/nightly/cu118/torch_nightly.html'
        build:
          - BASE_IMAGE: nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04
            TAGS:
              - mosaicml/pytorch:2.7.0_cu126-python3.12-ubuntu22.04
          - path: /usr/local/cuda-12.8
        description: "Weights: https://download.openmmlab.com/mae/vit-base-p16_8xb512-fp16-coslr.pth"
        """)
    assert [(c, ln, col) for c, ln, col, _ in found] == [
        ("NPU019", 2, 16), ("NPU212", 3, 16), ("NPU216", 5, 12), ("NPU028", 8, 14), ("NPU018", 10, 35),
        ("NPU016", 12, 17), ("NPU016", 14, 9), ("NPU027", 15, 11)]
    assert codes("cfg.yaml", "model:\n  init_device: cpu\n  model_dtype: fp32\njobs:\n  t:\n    runs-on: ubuntu-latest\n") == []


def test_python_here_documents_go_through_the_python_pass():
    found = audit("check_env.sh", """\
        set -e
        python - <<EOF
        import torch
        print(torch.cuda.get_device_name(0))
        EOF
        cat <<'TXT' > notes.md
        torch.cuda.get_device_name(0) prints the GPU name
        TXT
        """)
    assert [(c, ln, col) for c, ln, col, _ in found] == [("NPU002", 4, 7)]


def test_cpu_partitions_zero_gpus_and_environment_style_keys_are_not_requests():
    assert codes("serve_router.slurm", "#SBATCH --partition=hopper-cpu\n#SBATCH --gpus=0\npython router.py\n") == []
    assert codes("debug.sh", "python mason.py --cluster ai2/jupiter --gpus 0 -- python check.py\n") == []
    # `MODEL_ENV_VARS: {GPUS_PER_NODE: 2}` is what a script reads as `GPUS_PER_NODE=2`; a build matrix's
    # `CUDA_VERSION` is a build parameter (t15: NPU018 at info, like `ARG CUDA_VERSION` and a CI matrix's CUDA
    # version), not a scheduler request
    assert codes("model_config.yaml", "MODEL_ENV_VARS:\n  GPUS_PER_NODE: 2\n- CUDA_VERSION: 12.4.1\n".replace(
        "- CUDA", "BUILD:\n  CUDA")) == ["NPU018"]
    assert codes("recipe.yaml", "spec:\n  nodes: 2\n  gpus: 4\n") == ["NPU028"]


def test_ci_concurrency_groups_are_not_dependency_groups():
    workflow = """\
        jobs:
          gpu-tests:
            runs-on: ubuntu-latest
            concurrency:
              group: gpu-tests-${{ github.head_ref || github.run_id }}
              cancel-in-progress: true
            steps:
              - run: uv sync --group gpu --frozen
        """
    assert [(c, ln) for c, ln, *_ in audit(".github/workflows/tests.yml", workflow)] == [("NPU023", 8)]


def test_notebook_shell_lines_with_python_interpolation():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        'import sys\n'
        'REPO_URL = "git+https://github.com/facebookresearch/dinov2"\n'
        "!{sys.executable} -m pip install -e {REPO_URL}'[extras]' --extra-index-url https://pypi.nvidia.com\n"
        '!echo ${HOME} {sys.executable}')]
    result = ENGINE.analyze_bytes(nbformat.writes(nb).encode(), "depth_estimation.ipynb")
    assert [(f.code, f.line, f.col, f.data["cell_line"]) for f in result.findings] == [("NPU026", 3, 76, 3)]


def test_hydra_targets_transformer_engine_cuda_graphs_and_ci_cuda_setup():
    found = audit("conf/model/gpt.yaml", """\
        model:
          transformer_engine: True
          enable_cuda_graph: true
          fsdp_config:
            pure_bf16: true
          optim:
            _target_: apex.optimizers.FusedAdam
          loss:
            _target_: "flash_attn.losses.cross_entropy.CrossEntropyLoss"
          sched:
            _target_: torch.optim.lr_scheduler.CosineAnnealingLR
          quantization: fp8
        trainer:
          callbacks:
            - class_path: lightning.pytorch.callbacks.ModelCheckpoint
        """)
    assert [(c, ln, col) for c, ln, col, _ in found] == [
        ("NPU441", 2, 23), ("NPU024", 3, 22), ("NPU212", 5, 16), ("NPU310", 7, 15), ("NPU346", 9, 16),
        ("NPU216", 12, 17)]
    assert codes(".github/workflows/build.yml", "jobs:\n  b:\n    steps:\n      - uses: Jimver/cuda-toolkit@v0.2.19\n"
                 "      - uses: actions/checkout@v4\n") == ["NPU018"]
    assert codes("serve.sh", "python -m sglang.launch_server --model-path $M --disable-cuda-graph\n"
                 "torchrun pretrain_gpt.py --cuda-graph-impl none\n") == ["NPU447"]


def test_module_launch_options_and_configs_written_by_here_documents():
    found = audit("run_ds.sh", """\
        python -m torch.distributed.run --nproc_per_node=gpu train.py
        python -m lm_eval --model vllm --model_args pretrained=$M
        torchrun --nproc_per_node 8 finetuning.py --enable_fsdp --quantization 4bit
        config_json="./ds_config.json"
        cat <<EOT > $config_json
        {
          "train_micro_batch_size_per_gpu": $MICRO_BATCH_SIZE,
          "bf16": {"enabled": true},
          "zero_optimization": {"stage": $ZERO_STAGE}
        }
        EOT
        cat <<EOF
        Training in bf16: set "bf16": {"enabled": true} to change it
        EOF
        """)
    assert [(c, ln, s) for c, ln, _, s in found] == [
        ("NPU123", 1, "torch.distributed.run --nproc_per_node=gpu"), ("NPU447", 2, "lm_eval --model=vllm"),
        ("NPU441", 3, "--quantization 4bit"), ("NPU212", 8, "bf16.enabled: true")]
