"""Project-file families behind the misses of the first run on split test7 (issue 15, t15c; tuned on test7 from
then on): a bare `--device N` in notebook `!` lines and scripts, YAML that PyYAML rejects on a few lines, a
notebook's `cuda = True` switch, a workflow's `env: CUDA_VERSION`. Each test is a realistic file with the lines
that must be found and the lines that must not."""
from __future__ import annotations

import json
import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def _notebook(*cells: str) -> bytes:
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": textwrap.dedent(c).splitlines(keepends=True)} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def test_device_index_in_notebook_shell_lines():
    # yolov7 tools/compare_YOLOv7_vs_YOLOv5m6.ipynb: Colab cells that run the repository's scripts on GPU 0
    data = _notebook(
        """\
        !pip install --upgrade setuptools pip --user
        !pip install pycocotools>=2.0
        """,
        "!nvidia-smi\n",
        """\
        %cd /content/yolov7/
        !python test.py --data data/coco.yaml --img 640 --batch 32 --conf 0.001 --iou 0.65 --device 0 --weights yolov7.pt --name yolov7_640_val
        """,
        """\
        !python val.py --data data/coco.yaml --img 1280 --batch 1 --conf 0.001 --iou 0.65 --device=0 --weights yolov5m6.pt --half
        !python detect.py --weights ./yolov7.pt --conf 0.25 --img-size 640 --source inference/images/horses.jpg
        !python detect.py --weights ./yolov7.pt --device cpu --source inference/images/horses.jpg
        """)
    result = ENGINE.analyze_bytes(data, "tools/compare_YOLOv7_vs_YOLOv5m6.ipynb")
    got = sorted((f.line, f.code) for f in result.findings)
    assert (5, "NPU052") in got and (6, "NPU052") in got
    assert not [c for ln, c in got if ln in (1, 2, 4, 7, 8)]
    index = next(f for f in result.findings if f.code == "NPU052")
    assert index.severity == "info" and index.symbol == "--device 0"
    assert index.data["cell"] == 3 and index.data["cell_line"] == 2


def test_device_index_in_scripts_but_not_counts_or_device_names():
    script = """\
        #!/bin/bash
        # train P5 models on four GPUs
        python -m torch.distributed.launch --nproc_per_node 4 --master_port 9527 train.py --workers 8 --device 0,1,2,3 --sync-bn --batch-size 128
        python train.py --workers 8 --device 0 --batch-size 32 --data data/coco.yaml --img 640 640
        python train.py --accelerator gpu --devices 1 --strategy ddp
        python export.py --weights yolov7.pt --device cpu --simplify
        echo "use --device 0 for the first GPU"
        EVAL_ARGS="--img 640 --batch 32 --device 1"
        python test.py $EVAL_ARGS --weights yolov7.pt
        """
    got = found("scripts/train.sh", script)
    assert (3, "NPU052") in got and (4, "NPU052") in got
    assert "NPU052" not in [c for ln, c in got if ln in (2, 5, 6, 7)]   # a count, the CPU, a message
    assert (8, "NPU052") in got                                          # options kept in a variable


def test_yaml_rejected_on_a_few_lines_is_read_around_them():
    # Video-LLaMA train_configs/*.yaml: a value written as a choice (`"a/" or "b/"`) and an over-indented block
    # make PyYAML reject the file; the training settings below are what a port must change
    config = textwrap.dedent("""\
        model:
          arch: video_llama
          model_type: pretrain_vicuna
          freeze_vit: True

          # some ckpts could be download from our provided huggingface repo
          llama_model: "ckpt/vicuna-13b/" or "ckpt/vicuna-7b/" or "ckpt/llama-2-7b-chat-hf"
          imagebind_ckpt_path: "ckpt/imagebind_path/"
          llama_proj_model: 'ckpt/pretrained_minigpt4.pth' or  '/mnt/workspace/ckpt/pretrained_minigpt4_7b.pth'
          equip_audio_branch: False  # whether equips the audio branch

        datasets:
          cc_sbu_align:
            data_type: images
              build_info:
                storage: path/cc_sbu_align/
              vis_processor:
                train:
                  name: "blip2_image_train"
                  image_size: 224

        run:
          task: video_text_pretrain
          lr_sched: "linear_warmup_cosine_lr"
          amp: True
          device: "cuda"
          world_size: 1
          dist_url: "env://"
          distributed: True
        """).encode()
    result = ENGINE.analyze_bytes(config, "train_configs/visionbranch_stage2_finetune.yaml")
    assert [(f.line, f.code, f.symbol) for f in result.findings] == [(26, "NPU019", "run.device: cuda")]
    # the file is still reported as broken, with what was left out
    assert result.error is not None and result.error.kind == "syntax" and result.error.line == 7
    assert "7:" in result.error.message and "findings there are missing" in result.error.message


def test_yaml_that_is_not_yaml_stays_one_error():
    # prose or another format in a .yaml file: no settings guessed out of it
    text = "\n".join(f"{k}: value: with: colons: everywhere" for k in "abcdefghijkl") + "\n: - ]]\n"
    result = ENGINE.analyze_bytes(text.encode(), "notes.yaml")
    assert result.findings == []
    assert result.error is not None and result.error.kind == "syntax"
    templated = b"device: {{ .Values.device }}\nrun:\n  device: cuda\n  bad: \"a\" or \"b\"\n"
    assert ENGINE.analyze_bytes(templated, "chart/values.yaml").error is None       # Helm: skipped quietly


def test_notebook_cuda_switch_read_by_a_later_cell():
    # yolov7 tools/YOLOv7onnx.ipynb: `cuda = True` picks onnxruntime's CUDA provider two cells later
    data = _notebook(
        "!pip install onnxruntime-gpu\n",
        """\
        # Inference for ONNX model
        import cv2
        cuda = True
        verbose = True
        w = "/content/yolov7/yolov7-tiny.onnx"
        """,
        """\
        import onnxruntime as ort
        providers = ['CUDAExecutionProvider', 'CPUExecutionProvider'] if cuda else ['CPUExecutionProvider']
        session = ort.InferenceSession(w, providers=providers)
        if verbose:
            print(session.get_providers())
        """)
    result = ENGINE.analyze_bytes(data, "tools/YOLOv7onnx.ipynb")
    got = sorted((f.line, f.code) for f in result.findings)
    assert (4, "NPU053") in got
    assert not [c for ln, c in got if ln in (5, 6)]          # another switch, a path
    assert (8, "NPU033") in got                               # the provider it selects keeps its own finding
    unread = _notebook("import torch\ncuda = True\nprint(torch.__version__)\n")
    assert "NPU053" not in [f.code for f in ENGINE.analyze_bytes(unread, "demo.ipynb").findings]
    off = _notebook("use_cuda = False\n", "model = model.cuda() if use_cuda else model\n")
    assert "NPU053" not in [f.code for f in ENGINE.analyze_bytes(off, "demo.ipynb").findings]


def test_workflow_env_cuda_version_is_a_build_parameter():
    # DeepSeek-VL .github/workflows/lint.yml: the workflow's CUDA version, read by the editable build's steps
    workflow = """\
        name: Lint
        on:
          push:
            branches:
              - main
        env:
          CUDA_VERSION: "11.7"
          NCCL_VERSION: "2.18"
          CUDA_VERSION_TAG: ${{ matrix.cuda }}
        jobs:
          lint:
            runs-on: ubuntu-latest
            steps:
              - name: Install dependencies
                env:
                  USE_FP16: "OFF"
                  TORCH_CUDA_ARCH_LIST: "Auto"
                run: |
                  python -m pip install torch numpy pybind11
        """
    got = found(".github/workflows/lint.yml", workflow)
    assert (7, "NPU018") in got
    assert not [c for ln, c in got if ln in (8, 9)]          # NCCL's version, a CI expression
    assert (17, "NPU021") in got and (19, "NPU011") in got
    result = ENGINE.analyze_bytes(textwrap.dedent(workflow).encode(), "lint.yml")
    assert next(f for f in result.findings if f.line == 7).severity == "info"
