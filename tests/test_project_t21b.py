"""test28's project-file families (t21b, issue 15), each on a file written the way the labelled one is."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_negated_attention_switch_turned_off_selects_the_kernel(engine):
    # Qwen2-VL-Finetune's scripts/finetune.sh: `--disable_flash_attn2 False` leaves FlashAttention-2 on
    src = """\
        deepspeed src/train/train_sft.py \\
            --use_liger True \\
            --deepspeed scripts/zero3_offload.json \\
            --bf16 True \\
            --disable_flash_attn2 False \\
            --output_dir output/test_fft
        """
    found = codes_by_line(engine, src, "scripts/finetune.sh")
    assert "NPU363" in found[line_of(src, "--disable_flash_attn2 False")]
    off = src.replace("--disable_flash_attn2 False", "--disable_flash_attn2 True")
    assert "NPU363" not in codes_by_line(engine, off, "scripts/finetune.sh").get(line_of(off, "--disable_flash_attn2"), set())


def test_negated_switch_in_a_config(engine):
    src = """\
        model:
          disable_xformers: false
          disable_flash_attn: true
        """
    found = codes_by_line(engine, src, "configs/train.yaml")
    assert "NPU363" in found[line_of(src, "disable_xformers")]
    assert not found.get(line_of(src, "disable_flash_attn"))


def test_plain_shell_variable_nothing_sees_is_not_a_setting(engine):
    # VideoX-Fun's scripts/*/train*.sh: `NCCL_DEBUG=INFO` on its own line, neither exported nor read
    src = """\
        export MODEL_NAME="models/Diffusion_Transformer/FLUX.2-dev"
        # NCCL_IB_DISABLE is used in multi nodes without RDMA
        NCCL_DEBUG=INFO
        NCCL_IB_DISABLE=1
        NCCL_P2P_DISABLE=1
        export NCCL_P2P_DISABLE

        NCCL_SOCKET_IFNAME=eth0 accelerate launch --mixed_precision="bf16" scripts/flux2/train_lora.py \\
          --pretrained_model_name_or_path=$MODEL_NAME
        echo "IB off: $NCCL_IB_DISABLE"
        """
    found = codes_by_line(engine, src, "scripts/flux2/train_lora.sh")
    assert not found.get(line_of(src, "NCCL_DEBUG=INFO"))
    assert found.get(line_of(src, "NCCL_IB_DISABLE=1"))        # read below: the script uses it
    assert found.get(line_of(src, "NCCL_P2P_DISABLE=1"))         # exported below
    assert found.get(line_of(src, "NCCL_SOCKET_IFNAME=eth0"))    # the command's own environment
    allexport = "set -a\n" + textwrap.dedent(src)
    assert codes_by_line(engine, allexport, "train.sh").get(line_of(allexport, "NCCL_DEBUG=INFO"))


def _notebook(*cells: str) -> str:
    import json
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_env_magic_sets_the_variable(engine):
    # Matcha-TTS's synthesis.ipynb: `%env CUDA_VISIBLE_DEVICES=0` in its own cell, before the imports
    from static_snippets import snippet_findings

    nb = _notebook("%env CUDA_VISIBLE_DEVICES=0", "%set_env NCCL_DEBUG INFO\nimport torch",
                   "%env TOKENIZERS_PARALLELISM=false")
    found = {(f.line, f.code, f.col) for f in snippet_findings(engine, nb, "synthesis.ipynb")}
    assert (1, "NPU004", 6) in found          # the name's own column in the notebook's text
    assert any(line == 2 and code == "NPU121" for line, code, _ in found)
    assert not any(line == 4 for line, _, _ in found)


def test_triton_server_and_tensorrt_tools(engine):
    # FireRedASR's runtime/triton_tensorrt/run.sh: stages that build TensorRT engines and serve them with Triton
    src = """\
        if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
            echo "Starting Triton server"
            tritonserver --model-repository=model_repo_fireredasr_aed
        fi
        trtexec --onnx=encoder.onnx --saveEngine=encoder.plan --fp16
        python3 client.py --server-addr localhost --model-name whisper
        """
    found = codes_by_line(engine, src, "runtime/triton_tensorrt/run.sh")
    assert "NPU480" in found[line_of(src, "tritonserver --model")]
    assert "NPU480" in found[line_of(src, "trtexec")]
    assert not found.get(line_of(src, "echo"))
    assert not found.get(line_of(src, "client.py"))


def test_image_of_a_compose_service_reserving_nvidia_gpus(engine):
    # FireRedASR's runtime/triton_tensorrt/docker-compose.yml: a service on an image whose name says nothing
    src = """\
        services:
          asr:
            image: soar97/triton-fireredasr:25.06
            shm_size: '1gb'
            deploy:
              resources:
                reservations:
                  devices:
                    - driver: nvidia
                      device_ids: ['0']
                      capabilities: [gpu]
          cache:
            image: redis:7
          web:
            build: .
            image: myorg/web:latest
            runtime: nvidia
        """
    found = codes_by_line(engine, src, "docker-compose.yml")
    assert "NPU094" in found[line_of(src, "soar97/triton")]
    assert not found.get(line_of(src, "redis:7"))
    assert "NPU094" not in found.get(line_of(src, "myorg/web"), set())


def test_comfyui_workflow_dtype_widget(engine):
    # VideoX-Fun's comfyui/flux2/v1/flux2_workflow_t2i.json: a loader node's widgets, the weight dtype last
    src = """\
        {
          "nodes": [
            {
              "id": 3,
              "type": "LoadFlux2Model",
              "properties": {"Node name for S&R": "LoadFlux2Model"},
              "widgets_values": [
                "FLUX.2-dev",
                "sequential_cpu_offload",
                "bf16"
              ]
            },
            {
              "id": 4,
              "type": "Note",
              "widgets_values": ["set GPU_memory_mode to model_cpu_offload; bf16 weights"]
            }
          ]
        }
        """
    found = codes_by_line(engine, src, "comfyui/flux2/v1/flux2_workflow_t2i.json")
    assert "NPU212" in found[line_of(src, '"bf16"')]
    assert not found.get(line_of(src, "GPU_memory_mode"))
    assert "NPU212" in codes_by_line(engine, src, "example_workflows/wan_t2v.json")[line_of(src, '"bf16"')]


def test_flax_whisper_precision_modes(engine):
    # distil-whisper's training/flax/distillation_scripts/run_distillation_32_2_gpu.sh
    src = """\
        python3 run_distillation.py \\
          --dtype "bfloat16" \\
          --precision "full_mixed" \\
          --output_dir "./"
        python3 run_distillation.py --precision "full"
        """
    found = codes_by_line(engine, src, "training/flax/run.sh")
    assert "NPU212" in found[line_of(src, "full_mixed")]
    assert not found.get(line_of(src, '"full"'))


def test_torchrun_of_a_script_whose_src_layout_package_hard_codes_nccl(tmp_path):
    # SLAM-LLM's examples/s2s/scripts/pretrain/pretrain_tts_debug.sh: `torchrun \` whose file is
    # `$code_dir/finetune_s2s.py`, importing slam_llm from the src layout, whose train_utils starts an NCCL group
    from static_snippets import tree_codes_by_line, write_source

    root = tmp_path / "SLAM-LLM"
    write_source(root, "pyproject.toml", """\
        [tool.hatch.build.targets.wheel]
        packages = ["src/slam_llm"]
        """)
    write_source(root, "src/slam_llm/__init__.py", "")
    write_source(root, "src/slam_llm/utils/__init__.py", "")
    write_source(root, "src/slam_llm/utils/train_utils.py", """\
        import torch.distributed as dist


        def setup():
            dist.init_process_group("nccl")
        """)
    write_source(root, "src/slam_llm/pipeline/__init__.py", "")
    write_source(root, "src/slam_llm/pipeline/finetune.py", """\
        from slam_llm.utils.train_utils import setup


        def main(cfg):
            setup()
        """)
    write_source(root, "examples/s2s/finetune_s2s.py", """\
        from slam_llm.pipeline.finetune import main as train

        if __name__ == "__main__":
            train({})
        """)
    write_source(root, "examples/s2s/scripts/pretrain/pretrain_tts_debug.sh", """\
        code_dir=examples/s2s
        num_nodes=1
        torchrun \\
            --nnodes $num_nodes \\
            --nproc_per_node 2 \\
            $code_dir/finetune_s2s.py \\
            ++train_config.enable_ddp=true
        python $code_dir/finetune_s2s.py
        """)
    got = tree_codes_by_line(root, "examples/s2s/scripts/pretrain/pretrain_tts_debug.sh")
    # on the `torchrun \` line, which starts the processes (t22c; test24 / test28 / tuned_t22c label it there)
    assert "NPU143" in got.get(3, set()), got
    assert "NPU143" not in got.get(8, set()), got          # one process: the distributed branch may never run
