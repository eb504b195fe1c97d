"""Project-file families found by mining repositories in no bench split (issue 15, m15): each test is a
realistic snippet with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_notebook_cell_uses_torch_imported_in_an_earlier_cell():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch\nfrom apex import amp\nimport numpy as np"),
                nbformat.v4.new_markdown_cell("torch.cuda.synchronize() in prose"),
                nbformat.v4.new_code_cell("def profile_model(fn):\n    torch.cuda.reset_peak_memory_stats()\n"
                                          "    torch.cuda.synchronize()\n    return np.mean(fn())"),
                nbformat.v4.new_code_cell("model, opt = amp.initialize(model, opt)")]
    result = ENGINE.analyze_bytes(nbformat.writes(nb).encode(), "profile.ipynb")
    assert result.error is None
    got = {(f.line, f.code, f.data["cell"], f.data["cell_line"]) for f in result.findings}
    assert {(5, "NPU002", 3, 2), (6, "NPU002", 3, 3)} <= got
    assert any(line == 8 and cell == 4 for line, _, cell, _ in got)       # amp.initialize, apex imported in cell 1
    # the earlier cells' imports are reported once, in their own cell
    assert [f.code for f in result.findings if f.line == 2] == ["NPU300"]
    assert not any(cell == 3 and cell_line == 0 for _, _, cell, cell_line in got)


def test_ci_steps_each_their_own_script_and_python_steps_through_the_python_pass():
    workflow = """\
        runs:
          using: composite
          steps:
          - shell: python
            run: |
              import os, torch
              TORCH_CUDA_DEFAULT = "128"  # an unmatched " quote in bash
              print(torch.cuda.is_available())
          - shell: bash -l {0}
            run: |
              $PY -m pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu128
              which nvcc
          - shell: pwsh
            run: Write-Host "nvidia-smi"
          - run: |
              echo "$PY -m pip install xformers"
              PIP=${PIP:-pip3}
              $PIP install flash-attn --no-build-isolation
        """
    got = found(".github/actions/setup-env/action.yml", workflow)
    lines = {line for line, _ in got}
    assert 8 in lines                                   # torch.cuda.is_available() in the python step
    assert {(11, "NPU018"), (11, "NPU011"), (12, "NPU017"), (18, "NPU361")} <= set(got)
    assert not lines & {7, 14, 16}                      # python source is not bash; pwsh step; echo text


def test_cuda_version_inputs_matrix_tags_and_compose_defaults():
    workflow = """\
        on:
          workflow_dispatch:
            inputs:
              python-version:
                description: "The Python version to use for the build"
              cuda-version:
                description: "The CUDA version to use for the build"
                type: string
        jobs:
          upload:
            strategy:
              matrix:
                suffix:
                  - cu126
                  - rocm7.1
                cuda-version:
                  - "12.4"
        """
    got = found(".github/workflows/build.yml", workflow)
    assert set(got) >= {(6, "NPU018"), (14, "NPU018"), (16, "NPU018")} and not {ln for ln, _ in got} & {4, 7, 15}
    compose = """\
        services:
          app:
            build:
              args:
                BACKEND: ${BACKEND:-cuda}     # or cpu
                CUDA_VER: ${CUDA_VER:-12.9.0}
                UV_EXTRA: ${UV_EXTRA:-cu129}
                UV_VERSION: ${UV_VERSION:-0.8.15}
            environment:
              DEVICE: ${DEVICE:-cpu}
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(compose).encode(), "compose.base.yml")
    got2 = {(f.line, f.code, f.severity) for f in result.findings}
    assert got2 == {(5, "NPU019", "info"), (6, "NPU018", "info"), (7, "NPU023", "info")}


def test_gpu_switches_in_configs():
    config = """\
        device: cpu
        cuda: True
        use_cuda: false
        build:
          gpu: true
          python_version: "3.11"
        scaling_config:
          use_gpu: True
        test:
          gpu: false
        """
    got = found("cog.yaml", config)
    # a bare `cuda: True` is a boolean device option (lead decision 25, pd42): the calls it gates are the findings
    assert got == [(5, "NPU028"), (8, "NPU028")]


def test_cmake_switches_and_deepspeed_op_builds():
    script = """\
        #!/bin/bash
        cmake -B build -DGGML_CUDA=ON -DGGML_VULKAN=ON -DCMAKE_CUDA_ARCHITECTURES=86 -DUSE_CUDA=OFF
        CMAKE_ARGS="-DLLAMA_CUBLAS=on" pip install llama-cpp-python
        cmake_args+=("-DCMAKE_CUDA_ARCHITECTURES=${ARCH}")
        RUN_ARGS="-DUSE_ROCM=ON"
        DS_BUILD_UTILS=1 DS_BUILD_FUSED_LAMB=1 pip install deepspeed
        DS_BUILD_CPU_ADAM=1 pip install deepspeed
        echo "build with -DGGML_CUDA=ON"
        # cmake -DGGML_CUDA=ON
        """
    got = found("build.sh", script)
    assert got == [(2, "NPU021"), (2, "NPU021"), (3, "NPU021"), (4, "NPU021"), (6, "NPU808"), (6, "NPU808")]   # forced builds: t15q
    workflow = """\
        jobs:
          build:
            strategy:
              matrix:
                include:
                  - name: linux-cuda
                    cmake_flags: >-
                      -DGGML_NATIVE=OFF
                      -DGGML_CUDA=ON
                  - name: windows-x64-vulkan
                    cmake_flags: >-
                      -DGGML_VULKAN=ON
            steps:
              - run: |
                  gh release create "$tag" --notes "use \\`--backend cuda\\` on NVIDIA GPUs"
        """
    assert found(".github/workflows/build.yml", workflow) == [(9, "NPU021")]


def test_requirements_from_cuda_repositories_loose_versions_and_triton_pages():
    reqs = """\
        # dropout_layer_norm @ git+https://github.com/Dao-AILab/flash-attention.git (commented out)
        dropout_layer_norm @ git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3#subdirectory=csrc/layer_norm
        mypkg @ git+https://github.com/me/mypkg.git
        mmcv-full==latest+torch1.6.0+cu101
        foo==latest
        quack-kernels>=0.5.3
        gptqmodel>=1.0.9
        --find-links https://download.pytorch.org/whl/nightly/triton
        """
    assert found("requirements.txt", reqs) == [(2, "NPU809"), (4, "NPU440"), (6, "NPU360"), (7, "NPU440"),
                                                (8, "NPU360")]
    dockerfile = """\
        ARG PYTORCH="1.6.0"
        ARG TORCH=true
        FROM pytorch/pytorch:${PYTORCH}-cuda10.1-cudnn7-devel
        RUN uv pip install --system "/tmp/fa4[cu13,dev]" "/tmp/other[dev]"
        """
    assert found("Dockerfile", dockerfile) == [(1, "NPU011"), (3, "NPU016"), (4, "NPU023")]


def test_quantised_loading_switches_and_broken_continuations():
    script = """\
        python generate.py --load_8bit --base_model decapoda-research/llama-7b-hf
        python finetune.py --load-in-4bit --use_8bit False
        lm_eval --model hf \\\\
         --model_args pretrained=$MODEL,dtype=bfloat16,seed=$SEED \\\\
         --tasks $TASKS
        echo "--load_8bit halves the memory"
        """
    assert found("eval.sh", script) == [(1, "NPU441"), (2, "NPU441"), (4, "NPU212")]


def test_cuda_builds_of_other_packages_and_fsdp_json_discovered():
    from auditor.project import project_kind

    dockerfile = """\
        RUN pip3 install https://hf-mirror.com/csukuangfj/kaldifeat/resolve/main/ubuntu-cuda/kaldifeat-1.25.5.dev20240914+cuda12.1.torch2.4.1-cp38-cp38-manylinux_2_17_x86_64.whl
        RUN pip install https://data.pyg.org/whl/torch-2.3.0%2Bcpu/torch_scatter-2.1.2%2Bpt23cpu-cp310-cp310-linux_x86_64.whl
        """
    assert found("Dockerfile", dockerfile) == [(1, "NPU440")]
    assert project_kind("fsdp2.json") == "config" and project_kind("default_offload_opt_param.json") == "config"
    assert project_kind("results.json") is None and project_kind("en_US.json") is None


def test_runners_srun_requests_accelerate_gpus_and_ci_expression_names():
    script = """\
        CONDA_RUN="conda run -n build"
        ${CONDA_RUN} pip install fbgemm-gpu --index-url https://download.pytorch.org/whl/nightly/"$CU_VERSION"
        conda run -n "${CONDA_ENV}" python -c "import torch; print(torch.cuda.is_available())"
        srun --jobid $SLURM_JOBID --gres=gpu:8 --ntasks=8 python train.py
        srun --pty --partition=cpu bash
        accelerate launch --multi_gpu --gpu_ids 0,1 --num_processes 2 train.py
        if [[ ${MATRIX_GPU_ARCH_TYPE} = 'cuda' ]]; then echo "cuda build"; fi
        """
    got = found("validate.sh", script)
    assert [(ln, c) for ln, c in got if ln != 3] == [(2, "NPU440"), (4, "NPU028"), (6, "NPU124"),
                                                     (7, "NPU019")]
    assert any(ln == 3 for ln, _ in got)
    workflow = """\
        jobs:
          test:
            steps:
              - run: |
                  if [[ "${{ matrix.gpu-arch-type }}" == "cuda" ]]; then nvidia-smi; fi
                  pip install torch==${{ inputs.torch-version }} -f ${{ inputs.pytorch-index }}
        """
    assert found(".github/workflows/ci.yml", workflow) == [(5, "NPU017"), (5, "NPU019"), (6, "NPU011")]


def test_json_in_a_config_folder_is_a_config(tmp_path):
    from auditor.project import project_kind

    assert project_kind("starting_point_v1.json", "helpers/training_configs/starting_point_v1.json") == "config"
    assert project_kind("run1.json", "results/run1.json") is None
    assert project_kind("run1.json") is None


def test_lmms_eval_backends_and_inline_model_args():
    script = """\
        python3 -m lmms_eval \\
            --model vllm \\
            --model_args model=Qwen/Qwen2-VL-7B-Instruct,tensor_parallel_size=4
        accelerate launch --num_processes=8 -m lmms_eval \\
            --model penguinvl \\
            --model_args=pretrained=tencent/Penguin-VL-8B,attn_implementation=flash_attention_2,dtype=bfloat16
        accelerate launch --num_processes=8 -m lmms_eval --model llava_hf --tasks mme
        """
    assert found("eval.sh", script) == [(2, "NPU447"), (6, "NPU212"), (6, "NPU363")]


def test_yaml_anchor_merges_report_a_setting_once_and_multi_gpu_is_accelerates():
    config = """\
        wt103: &wt103
          device: cuda
          fp16: false
        dgx1_8gpu_fp16:
          train:
            <<: *wt103
        dgx1_1gpu_fp32:
          train:
            <<: *wt103
        """
    assert found("wt103_base.yaml", config) == [(2, "NPU019")]
    # Transformer-XL's own `cuda: true` (its `--cuda` switch) is a boolean device option: no finding (decision 25, pd42)
    assert found("wt103_base.yaml", config.replace("device: cuda", "cuda: true")) == []
    script = ("python train.py --multi_gpu --batch_size 4\naccelerate launch --multi_gpu train.py\n"
              'export LAUNCHER="accelerate launch \\\n    --multi_gpu \\\n    --num_processes 8"\n')
    assert found("run.sh", script) == [(2, "NPU124"), (4, "NPU124")]
