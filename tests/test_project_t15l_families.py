"""Project-file families behind the misses of the first run on split test11 (issue 15, t15l; tuned on test11 after
its blind run): realistic snippets (written for the test, not copied from the bench trees) with the lines that must
be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def codes_on(name: str, text: str, line: int) -> set[str]:
    return {code for n, code in found(name, textwrap.dedent(text)) if n == line}


LAUNCH = """\
    #!/bin/bash
    #SBATCH --nodes=16
    #SBATCH --cpus-per-task=12
    MODEL=open_lm_1b
    srun --cpu_bind=v --accel-bind=gn python -m open_lm.main \\
        --model $MODEL \\
        --precision amp_bfloat16 \\
        --fsdp \\
        --fsdp-amp \\
        --lr 3e-4
    srun --cpu_bind=v --accel-bind=v python -m open_lm.eval --precision amp
"""


def test_open_lm_launch_precision_and_slurm_gpu_binding():
    assert "NPU022" in codes_on("train.sh", LAUNCH, 5)        # --accel-bind=gn binds tasks to GPUs
    assert "NPU212" in codes_on("train.sh", LAUNCH, 7)        # amp_bfloat16
    assert "NPU212" in codes_on("train.sh", LAUNCH, 9)        # --fsdp-amp (bf16 mixed precision in FSDP)
    assert codes_on("train.sh", LAUNCH, 11) == set()          # verbose binding only, fp32/fp16 amp


def test_open_lm_yaml_config_keeps_hyphenated_keys():
    cfg = """\
        model: "open_lm_7b"
        precision: "amp_bfloat16"
        fsdp: True
        fsdp-pure-bf16: True
        fsdp-amp: False
        lr: 3.e-4
    """
    assert "NPU212" in codes_on("cfg.yaml", cfg, 2)
    assert "NPU212" in codes_on("cfg.yaml", cfg, 4)
    assert codes_on("cfg.yaml", cfg, 5) == set()


def test_mosaicml_run_yaml_gpu_count_even_left_blank():
    run = """\
        name: sdxl-base
        image: mosaicml/pytorch_vision:2.1.0_cu121-python3.10-ubuntu20.04
        compute:
          cluster: # your cluster
          gpus:  # number of GPUs
        parameters:
          seed: 17
          gpus_note: 8
    """
    assert "NPU028" in codes_on("run.yaml", run, 5)
    assert codes_on("run.yaml", run, 8) == set()


def test_nemo_trt_llm_switch_in_hydra_overrides_and_yaml():
    script = """\
        #!/bin/bash
        torchrun --nproc-per-node 2 examples/nlp/gpt/train_gpt_ppo_actor.py \\
            trainer.ppo.trt_llm.enable=True \\
            trainer.ppo.trt_llm.reshard=True \\
            trainer.ppo.max_steps=3
        python train.py trainer.ppo.trt_llm.enable=False
    """
    assert "NPU441" in codes_on("ppo.sh", script, 3)
    assert codes_on("ppo.sh", script, 6) == set()
    cfg = """\
        trainer:
          ppo:
            trt_llm:
              enable: False
              reshard: True
    """
    assert not any(code == "NPU441" for _, code in found("ppo.yaml", textwrap.dedent(cfg)))


def test_reusable_workflow_script_input_is_a_shell_script():
    wf = """\
        name: CICD
        on: [push]
        jobs:
          unit-tests:
            uses: ./.github/workflows/_test_template.yml
            with:
              RUNNER: self-hosted-azure
              TIMEOUT: 10
              SCRIPT: |
                nvidia-smi
                cd ${REPO_DIR}
                bash tests/run_unit.sh
    """
    assert "NPU017" in codes_on(".github/workflows/cicd.yml", wf, 10)
    assert codes_on(".github/workflows/cicd.yml", wf, 7) == set()


def test_ci_gpu_steps_driver_runfile_nvidia_docker_repo_and_docker_exec():
    ci = """\
        version: 2.1
        jobs:
          gpu_tests:
            machine:
              image: ubuntu-2004-cuda-11.4:202110-01
            steps:
              - checkout
              - run:
                  name: Install nvidia driver
                  command: |
                    wget -q https://us.download.nvidia.com/XFree86/Linux-x86_64/450.80.02/NVIDIA-Linux-x86_64-450.80.02.run
                    sudo /bin/bash ./NVIDIA-Linux-x86_64-450.80.02.run -s --no-drm
              - run:
                  name: Install nvidia-docker
                  command: |
                    curl -s -L https://nvidia.github.io/nvidia-docker/gpgkey | sudo apt-key add -
                    curl -s -L https://nvidia.github.io/nvidia-docker/$distribution/nvidia-docker.list
              - run:
                  name: Check
                  command: |
                    docker exec -it trainer nvidia-smi
                    docker exec -e LOG=1 -w /src trainer python3 -m pytest tests
                    docker exec -it trainer ls /workspace
    """
    assert "NPU074" in codes_on(".circleci/config.yml", ci, 11)     # the driver runfile downloaded
    assert "NPU074" in codes_on(".circleci/config.yml", ci, 12)     # ...and run through a shell
    assert "NPU017" in codes_on(".circleci/config.yml", ci, 16)     # nvidia-docker's apt repository
    assert "NPU017" in codes_on(".circleci/config.yml", ci, 21)     # nvidia-smi inside the container
    assert "NPU017" in codes_on(".circleci/config.yml", ci, 17)     # ...also cut at a shell variable
    assert codes_on(".circleci/config.yml", ci, 22) == set()
    assert codes_on(".circleci/config.yml", ci, 23) == set()


def test_tensorrt_build_in_dockerfile_and_mim_install():
    dockerfile = """\
        FROM nvcr.io/nvidia/pytorch:24.07-py3
        ARG TRTLLM_VERSION
        RUN git clone https://github.com/NVIDIA/TensorRT-LLM.git && \\
            cd TensorRT-LLM && git checkout ${TRTLLM_VERSION} && \\
            . docker/common/install_tensorrt.sh && \\
            python3 ./scripts/build_wheel.py --job_count $(nproc) --trt_root /usr/local/tensorrt && \\
            cd ..
        RUN . /opt/venv/bin/activate && source scripts/install_deps.sh
        RUN mim install mmengine mmcv-full==1.7.2
        RUN mim install mmengine
    """
    assert "NPU441" in codes_on("Dockerfile", dockerfile, 5)
    assert "NPU441" in codes_on("Dockerfile", dockerfile, 6)
    assert codes_on("Dockerfile", dockerfile, 8) == set()
    assert "NPU440" in codes_on("Dockerfile", dockerfile, 9)
    assert codes_on("Dockerfile", dockerfile, 10) == set()


def test_nemo_apex_optimizer_and_o2_in_config_and_overrides():
    cfg = """\
        trainer:
          devices: 8
          precision: bf16
        model:
          megatron_amp_O2: True
          optim:
            name: distributed_fused_adam
            lr: 9e-6
          ref_optim:
            name: adamw
    """
    assert "NPU223" in codes_on("gpt_dpo.yaml", cfg, 5)
    assert "NPU313" in codes_on("gpt_dpo.yaml", cfg, 7)
    assert codes_on("gpt_dpo.yaml", cfg, 10) == set()
    script = """\
        #!/bin/bash
        python examples/nlp/gpt/train_gpt_sft.py \\
            model.megatron_amp_O2=False \\
            model.optim.name=fused_adam \\
            model.optim.lr=1e-5
    """
    assert codes_on("sft.sh", script, 3) == set()
    assert "NPU313" in codes_on("sft.sh", script, 4)


def test_mpirun_options_with_values_before_the_launched_command():
    script = """\
        #!/bin/bash
        mpirun -np 2 --allow-run-as-root -x NCCL_DEBUG --mca btl ^openib python -u train_gpt_ppo_actor.py \\
            trainer.num_nodes=1 \\
            trainer.ppo.trt_llm.enable=True \\
            trainer.ppo.trt_llm.reshard=True
        mpirun -np 2 python -u train_gpt_ppo_actor.py trainer.ppo.trt_llm.enable=False
    """
    assert "NPU441" in codes_on("ppo.sh", script, 4)
    assert codes_on("ppo.sh", script, 6) == set()
