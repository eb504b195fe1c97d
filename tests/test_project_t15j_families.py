"""Project-file families behind the misses of the first run on split test10 (issue 15, t15j; test10 is tuned on
from here): config switches of CUDA-only features, compose environment lists, FlashInfer release wheels, LLaVA's
QLoRA `--bits 4`. Each test is a realistic file with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_training_config_switches_of_fused_adam_and_a_flash_attention_environment_entry():
    config = """\
        {
            "distributed": {"tp_size": 2, "dp_size": 4, "backend": "nccl", "use_cpu": false},
            "model": {
                "name": "meta-llama/Llama-3.2-1B",
                "num_hidden_layers": 16,
                "use_fused_adam": true,
                "use_fused_sgd": true
            },
            "training": {"seed": 42, "learning_rate": 3e-4, "micro_batch_size": 8},
            "environment": {
                "OMP_NUM_THREADS": "1",
                "TOKENIZERS_PARALLELISM": "false",
                "FLASH_ATTEN": "1",
                "HF_TOKEN": null
            }
        }
        """
    codes = found("template/base_config.json", config)
    assert (6, "NPU604") in codes              # the fused AdamW the trainer turns on for CUDA only
    assert (13, "NPU363") in codes             # exported by train.py, read by the model's attention
    assert not [c for ln, c in codes if ln in (7, 11, 12, 14)]   # no fused-SGD rule; plain variables
    off = config.replace('"use_fused_adam": true', '"use_fused_adam": false').replace('"FLASH_ATTEN": "1"',
                                                                                      '"FLASH_ATTEN": "0"')
    assert not [c for ln, c in found("template/base_config.json", off) if ln in (6, 13)]


def test_hydra_config_cudnn_benchmark_and_diffusers_xformers_switch():
    hydra = """\
        defaults:
          - _self_
          - model: small_16k
        exp_id: default
        debug: False
        cudnn_benchmark: True
        compile: True
        num_workers: 10 # per-GPU
        pin_memory: False
        """
    codes = found("config/base_config.yaml", hydra)
    assert (6, "NPU704") in codes
    assert not [c for ln, c in codes if ln != 6]
    assert not found("config/eval_config.yaml", hydra.replace("cudnn_benchmark: True", "cudnn_benchmark: False"))

    training = """\
        output_dir: "outputs"
        pretrained_model_path: "models/StableDiffusion/"
        train_data:
          csv_path: "results_10M_train.csv"
          sample_size: 256
        learning_rate: 3.e-5
        train_batch_size: 4
        mixed_precision_training: true
        enable_xformers_memory_efficient_attention: True
        gradient_checkpointing: False
        """
    codes = found("configs/training/image_finetune.yaml", training)
    assert (9, "NPU363") in codes
    assert not [c for ln, c in codes if ln != 9]


def test_compose_environment_list_items_are_variables_like_the_mapping_form():
    compose = """\
        version: '3.8'
        services:
          tts:
            build:
              context: .
              dockerfile: Dockerfile
            container_name: tts_container
            runtime: nvidia
            network_mode: "host"
            command: ["python3", "gradio_interface.py"]
            environment:
              - NVIDIA_VISIBLE_DEVICES=0
              - GRADIO_SHARE=False
              - "CUDA_DEVICE_MAX_CONNECTIONS=1"
              - HF_HOME
        """
    codes = found("docker-compose.yml", compose)
    assert (12, "NPU004") in codes
    assert any(ln == 14 for ln, _ in codes)
    assert not [c for ln, c in codes if ln in (13, 15)]
    # the mapping form, as before
    mapping = compose.replace("- NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES: 0") \
        .replace("- GRADIO_SHARE=False", "GRADIO_SHARE: 'False'") \
        .replace('- "CUDA_DEVICE_MAX_CONNECTIONS=1"', "CUDA_DEVICE_MAX_CONNECTIONS: 1") \
        .replace("- HF_HOME", "HF_HOME: /data/hf")
    codes = found("docker-compose.yml", mapping)
    assert (12, "NPU004") in codes


def test_flashinfer_release_wheel_downloaded_with_wget():
    wheel = "flashinfer_python-0.2.2.post1+cu124torch2.6-cp38-abi3-linux_x86_64.whl"
    release = "https://github.com/flashinfer-ai/flashinfer/releases/download/v0.2.2.post1"
    dockerfile = f"""\
        FROM nvcr.io/nvidia/pytorch:24.08-py3
        # Install flashinfer-0.2.2.post1+cu124 (cxx11abi=False)
        # see https://github.com/flashinfer-ai/flashinfer/releases
        RUN wget -nv {release}/{wheel} && \\
            pip install --no-cache-dir {wheel}
        RUN wget -nv https://github.com/hiyouga/EasyR1/archive/refs/heads/main.zip
        """
    codes = found("Dockerfile", dockerfile)
    assert (4, "NPU361") in codes and (5, "NPU361") in codes
    assert not [c for ln, c in codes if ln in (2, 3, 6)]


def test_llava_qlora_bits_with_lora_enable_and_not_a_gptq_quantizer():
    script = """\
        #!/bin/bash
        deepspeed llava/train/train_mem.py \\
            --deepspeed ./scripts/zero2.json \\
            --lora_enable True \\
            --bits 4 \\
            --model_name_or_path ./checkpoints/$MODEL_VERSION \\
            --version $PROMPT_VERSION \\
            --output_dir ./checkpoints/llava-$MODEL_VERSION-finetune_lora \\
            --num_train_epochs 1
        """
    codes = found("scripts/finetune_qlora.sh", script)
    assert (5, "NPU441") in codes
    gptq = """\
        #!/bin/bash
        python quantize.py \\
            --model_name_or_path meta-llama/Llama-2-7b-hf \\
            --bits 4 \\
            --group_size 128 \\
            --output_dir ./llama-2-7b-gptq
        """
    assert not [c for ln, c in found("scripts/quantize_gptq.sh", gptq) if ln == 4]
    lora_off = script.replace("--lora_enable True", "--lora_enable False")
    assert not [c for ln, c in found("scripts/finetune_full.sh", lora_off) if ln == 5]


def _extras_tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "tts"
        version = "0.1.0"
        dependencies = ["torch>=2.5.0", "torchaudio>=2.5.0", "transformers>=4.45.0", "numpy"]

        # These are technically optional, but mamba-ssm is required to run hybrid models.
        [project.optional-dependencies]
        compile = [
            "flash-attn>=2.7.3",
            "mamba-ssm>=2.2.4",
            "causal-conv1d>=1.5.0.post8",
        ]
        dev = ["pytest>=8", "ruff"]
        """))
    (tmp_path / "Dockerfile").write_text(textwrap.dedent("""\
        FROM python:3.11-slim
        RUN pip install uv
        WORKDIR /app
        COPY . ./
        RUN uv pip install --system -e . && uv pip install --system -e .[compile]
        RUN uv pip install --system -e ".[dev]"
        """))
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup_env.sh").write_text(textwrap.dedent("""\
        #!/bin/bash
        set -e
        pip install -e ".[dev,compile]"
        pip install -e ".[missing]"
        """))
    return tmp_path


def test_install_of_a_local_extra_that_lists_cuda_only_packages(tmp_path):
    from pathlib import Path

    from auditor.runner import run_static

    root = _extras_tree(tmp_path)
    run = run_static([Path(root)], jobs=1)
    got = {(Path(r.path).name, f.line): f for r in run.results for f in r.findings if f.code == "NPU023"}
    assert set(got) == {("Dockerfile", 5), ("setup_env.sh", 3)}, got
    f = got[("Dockerfile", 5)]
    assert f.category == "device" and f.severity == "error"
    assert "flash-attn" in f.message and "mamba-ssm" in f.message and "pyproject.toml" in f.message
    assert "`compile` extra" in got[("setup_env.sh", 3)].message


def test_local_extra_call_reads_the_folder():
    from auditor.project.local_extras import local_extra_call

    assert local_extra_call(".", ["compile"], "") == {"dir": "", "extras": ["compile"]}
    assert local_extra_call("./sub", ["gpu"], "") == {"dir": "sub", "extras": ["gpu"]}
    assert local_extra_call(".", ["all"], "pkg") == {"dir": "pkg", "extras": ["all"]}
    assert local_extra_call(".", ["x"], "/app") == {"dir": "", "extras": ["x"]}
    assert local_extra_call("$SRC", ["x"], "") is None
    assert local_extra_call(".", ["${EXTRA}"], "") is None


def test_local_extra_with_a_broken_or_odd_pyproject_gives_nothing(tmp_path):
    from pathlib import Path

    from auditor.runner import run_static

    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . /app\nRUN pip install -e .[compile]\n")
    for text in ('project = "tts"\n', "[project]\noptional-dependencies = 3\n", "[project\nname = 'x'\n"):
        (tmp_path / "pyproject.toml").write_text(text)
        run = run_static([Path(tmp_path)], jobs=1)
        assert not [f for r in run.results for f in r.findings if f.code == "NPU023"]
