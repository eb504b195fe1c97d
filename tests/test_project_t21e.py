"""test29's project-file families (t21e, issue 15; test29 TUNED), each on a file written the way the labelled one is."""
from __future__ import annotations


import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_ray_tune_gpu_share_per_trial_is_a_gpu_request(engine):
    # parseq's configs/tune.yaml and configs/experiment/tune_abinet-lm.yaml (tune.py hands it to Ray as {'gpu': ...})
    src = """\
        defaults:
          - main
          - _self_

        tune:
          num_samples: 10
          gpus_per_trial: 1
        """
    assert "NPU022" in codes_by_line(engine, src, "configs/tune.yaml")[line_of(src, "gpus_per_trial")]
    half = src.replace("gpus_per_trial: 1", "gpus_per_trial: 0.5")
    assert "NPU022" in codes_by_line(engine, half, "configs/experiment/tune_abinet-lm.yaml")[line_of(half, "gpus_per_trial")]
    none = src.replace("gpus_per_trial: 1", "gpus_per_trial: 0")
    assert not codes_by_line(engine, none, "configs/tune.yaml").get(line_of(none, "gpus_per_trial"))


def test_load_in_bits_option_loads_through_bitsandbytes(engine):
    # Llama2-Chinese's train/sft/finetune_lora.sh (finetune_clm_lora.py: 8 -> load_in_8bit, 4 -> BitsAndBytesConfig)
    src = """\
        deepspeed --include localhost:1,0 --num_gpus 2  finetune_clm_lora.py \\
            --model_name_or_path meta-llama/Llama-2-7b-chat-hf \\
            --warmup_steps 400 \\
            --load_in_bits 4 \\
            --lora_r 8 \\
            --output_dir output
        """
    assert "NPU441" in codes_by_line(engine, src, "train/sft/finetune_lora.sh")[line_of(src, "--load_in_bits")]
    full = src.replace("--load_in_bits 4", "--load_in_bits 16")
    assert "NPU441" not in codes_by_line(engine, full, "train/sft/finetune_lora.sh").get(line_of(full, "--load_in_bits"), set())


def test_fp16_opt_level_inside_deepspeeds_fp16_block_is_read_by_nothing(engine):
    # Llama2-Chinese's train/pretrain/ds_config_zero3.json: HF's fp16_opt_level copied into DeepSpeed's fp16 block
    src = """\
        {
            "fp16": {
                "enabled": "auto",
                "loss_scale": 0,
                "fp16_opt_level": "O2"
            },
            "amp": {
                "enabled": false,
                "opt_level": "O1"
            }
        }
        """
    found = codes_by_line(engine, src, "train/pretrain/ds_config_zero3.json")
    assert "NPU317" not in found.get(line_of(src, "fp16_opt_level"), set())
    # DeepSpeed passes its `amp` block to apex's amp.initialize: that opt level is apex's
    assert "NPU317" in found[line_of(src, '"opt_level"')]


def test_lmdeploy_chosen_as_the_inference_backend(engine):
    # MonkeyOCR's model_configs.yaml: custom_model.py builds lmdeploy.pipeline(PytorchEngineConfig(...)) from it
    src = """\
        device: cuda # cuda or cpu
        chat_config:
          weight_path: model_weight/Recognition
          backend: lmdeploy # lmdeploy or vllm or transformers
          batch_size: 10 # active when using `transformers` as backend
        """
    found = codes_by_line(engine, src, "model_configs.yaml")
    assert "NPU447" in found[line_of(src, "backend: lmdeploy")]
    plain = src.replace("backend: lmdeploy", "backend: transformers")
    assert "NPU447" not in codes_by_line(engine, plain, "model_configs.yaml").get(line_of(plain, "backend:"), set())


def test_hydra_target_of_a_rule_that_wants_an_argument_value(engine):
    # parseq's configs/main.yaml: `_target_: pytorch_lightning.Trainer` with no precision key is no fp16 (NPU256 wants
    # `precision=16`); a target whose rule wants no value (apex's FusedAdam, NPU310) still reports
    src = """\
        trainer:
          _target_: pytorch_lightning.Trainer
          _convert_: all
          max_epochs: 20
          accelerator: gpu
        optimizer:
          _target_: apex.optimizers.FusedAdam
          lr: 1e-4
        """
    found = codes_by_line(engine, src, "configs/main.yaml")
    assert "NPU256" not in found.get(line_of(src, "pytorch_lightning.Trainer"), set())
    assert "NPU020" in found[line_of(src, "accelerator: gpu")]
    assert "NPU310" in found[line_of(src, "apex.optimizers.FusedAdam")]
