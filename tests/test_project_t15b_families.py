"""Project-file families behind the misses and false hits of the first run on split test6 (issue 15, t15b; tuned
on test6 from then on): environment lists held in a string, CI logging commands that set variables, Azure
Pipelines `bash:` steps and agent pools, qlora's `--bits`, precision options of a CPU-only command. Each test is a
realistic snippet with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_environment_assignments_held_in_a_string_and_used_as_a_command_prefix():
    # CogVLM finetune_demo/*.sh and SwissArmyTransformer's examples: the NCCL settings are kept in a variable and
    # put in front of the deepspeed command later
    script = """\
        #! /bin/bash
        NUM_GPUS_PER_WORKER=8
        MP_SIZE=1
        script_path=$(realpath $0)
        OPTIONS_NCCL="NCCL_DEBUG=info NCCL_IB_DISABLE=0 NCCL_NET_GDR_LEVEL=2 LOCAL_WORLD_SIZE=$NUM_GPUS_PER_WORKER"
        HOST_FILE_PATH="hostfile"
        HINT="set NCCL_DEBUG=info to see why it hangs"
        gpt_options=" --experiment-name finetune-demo --model-parallel-size ${MP_SIZE} --mode finetune"
        run_cmd="${OPTIONS_NCCL} deepspeed --master_port 16666 --hostfile ${HOST_FILE_PATH} finetune.py ${gpt_options}"
        echo ${run_cmd}
        eval ${run_cmd}
        """
    got = found("finetune_demo/finetune_lora.sh", script)
    assert [c for ln, c in got if ln == 5] == ["NPU121", "NPU121", "NPU121"]
    assert not [c for ln, c in got if ln == 7]       # a hint in a string, not a list of assignments
    result = ENGINE.analyze_bytes(textwrap.dedent(script).encode(), "x.sh")
    columns = sorted(f.col for f in result.findings if f.line == 5)
    assert columns == [15, 31, 49]                   # each name where it is written


def test_azure_pipelines_bash_steps_set_variable_commands_and_gpu_pool():
    # lit-llama / litgpt .azure/gpu-test.yml: a self-hosted GPU pool, `- bash:` steps that set variables with
    # Azure's logging command and check the GPUs
    pipeline = """\
        trigger:
          branches:
            include: ["main"]
        jobs:
          - job: testing
            timeoutInMinutes: "20"
            pool: "lit-rtx-3090"
            variables:
              DEVICES: $( python -c 'print("$(Agent.Name)".split("_")[-1])' )
            steps:
            - bash: |
                echo "##vso[task.setvariable variable=CUDA_VISIBLE_DEVICES]$(DEVICES)"
                echo "##vso[task.setvariable variable=TORCH_URL]https://download.pytorch.org/whl/cpu"
              displayName: 'set env. vars'
            - bash: |
                echo $CUDA_VISIBLE_DEVICES
                nvidia-smi
                python -c "import torch ; mgpu = torch.cuda.device_count() ; assert mgpu == 2, f'GPU: {mgpu}'"
              displayName: 'Image info & NVIDIA'
            - pwsh: |
                nvidia-smi
            - script: pip install ".[all]" "pytest"
        """
    got = found(".azure/gpu-tests.yml", pipeline)
    assert (7, "NPU028") in got                      # the GPU agent pool
    assert (12, "NPU004") in got                     # CUDA_VISIBLE_DEVICES set for the later steps
    assert not [c for ln, c in got if ln in (13, 16, 21)]   # another variable, an echo, a PowerShell step
    assert (17, "NPU017") in got                     # nvidia-smi
    assert (18, "NPU002") in got                     # torch.cuda.device_count() through the Python pass
    cpu_pool = pipeline.replace("lit-rtx-3090", "ubuntu-22.04")
    assert not [c for ln, c in found(".azure/gpu-tests.yml", cpu_pool) if ln == 7]


def test_bash_key_outside_ci_steps_is_not_a_script():
    config = """\
        shell:
          bash: nvidia-smi
        completion:
          bash: true
        """
    assert found("tool.yaml", config) == []


def test_github_set_env_command_sets_the_variable():
    workflow = """\
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
              - run: |
                  echo "::set-env name=NCCL_P2P_DISABLE::1"
                  echo "NCCL_P2P_DISABLE is set for the tests"
        """
    got = found(".github/workflows/test.yml", workflow)
    assert (6, "NPU121") in got and not [c for ln, c in got if ln == 7]


def test_qlora_bits_option_is_bitsandbytes_loading_only_beside_its_quantisation_type():
    # artidoro/qlora scripts/finetune_*.sh: `--bits 4` with `--double_quant --quant_type nf4`
    qlora = """\
        python qlora.py \\
            --model_name_or_path huggyllama/llama-7b \\
            --output_dir ./output/guanaco-7b \\
            --lora_r 64 \\
            --lora_modules all \\
            --double_quant \\
            --quant_type nf4 \\
            --bits 4 \\
            --seed 0
        """
    assert (8, "NPU441") in found("scripts/finetune_guanaco_7b.sh", qlora)
    full = qlora.replace("--bits 4", "--bits 16")
    assert not [c for ln, c in found("scripts/finetune.sh", full) if ln == 8]
    # GPTQ / AWQ scripts also say `--bits 4`, without bitsandbytes' quantisation type: not this rule's case
    gptq = """\
        python quant_with_alpaca.py \\
            --pretrained_model_dir facebook/opt-125m \\
            --bits 4 \\
            --group_size 128
        """
    assert not [c for ln, c in found("examples/quantize.sh", gptq) if ln == 3]


def test_precision_option_of_a_cpu_only_command_is_not_reported():
    # RWKV-LM demo-training-prepare.sh: the init step runs on the CPU (`--accelerator cpu`), the same on Ascend
    script = """\
        MODEL_TYPE="x052"
        python train.py --wandb "" --proj_dir $PROJ_DIR \\
         --lr_init 1e-5 --lr_final 1e-5 --warmup_steps 10 --beta1 0.9 --beta2 0.99 --adam_eps 1e-8 \\
         --accelerator cpu --devices 1 --precision bf16 --strategy deepspeed_stage_2 --grad_cp 1
        python train.py --wandb "" --proj_dir $PROJ_DIR \\
         --accelerator gpu --devices 8 --precision bf16 --strategy deepspeed_stage_2 --grad_cp 1
        """
    got = found("demo-training-prepare.sh", script)
    assert not [c for ln, c in got if ln == 4]
    assert (6, "NPU212") in got


_AZURE_CUDA_JOB = """\
jobs:
  - job: testing
    pool: "lit-rtx-3090"
    container:
      image: "pytorchlightning/pytorch_lightning:base-cuda-py3.10-torch2.0-cuda11.7.1"
      options: "--gpus=all --shm-size=8gb"
    steps:
    - bash: |
        nvidia-smi
        python -c "import torch ; assert torch.cuda.device_count() == 2"
  - job: cpu
    pool:
      vmImage: "ubuntu-22.04"
    steps:
    - script: nvidia-smi || echo "no GPU"
"""


def test_findings_in_an_azure_job_on_a_cuda_container_are_info(tmp_path):
    # the same policy as a GitHub Actions job on NVIDIA runners (auditor/static/ci_jobs.py): the job tests the
    # CUDA build on purpose and stays; a job on a plain CPU pool keeps its severities
    from tests.static_snippets import findings_in_tree, write_source

    write_source(tmp_path, ".azure/gpu-tests.yml", _AZURE_CUDA_JOB)
    found = findings_in_tree(tmp_path)
    lines = {line: sev for (p, line, _code), sev in found.items() if p == ".azure/gpu-tests.yml"}
    assert lines[9] == "info" and lines[10] == "info"       # nvidia-smi, torch.cuda in the CUDA container's job
    assert lines[15] == "error"                             # nvidia-smi on the CPU pool: not a CUDA-only job
