"""Project-file families of t15r (issue 15, tuned on project test14): a Cog file that opens with a Python-style
docstring, pip list items with their own CUDA index, Amulet job files (`sku: G8`, a DGX target), the diffusers
`use_8bit_adam` switch, accelerate's TPU-only `downcast_bf16`, FORCE_CUDA set as kernel work (t15q's NPU808, checked
here on test14's shapes), and a launch script's own count (`CUDA_NUM=${#CUDAs[@]}`). Realistic snippets written for
these tests, each with the lines that stay quiet."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def audit(name: str, text: str, *, parses: bool = True) -> list[tuple[str, int, str, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    if parses:
        assert result.error is None, result.error
    return [(f.code, f.line, f.symbol, f.severity, f.category) for f in result.findings]


def lines(found) -> set[int]:
    return {f[1] for f in found}


def test_cog_file_with_a_docstring_header_is_read_below_it():
    found = audit("cog.yaml", '''\
        """
        This file is used for deploying the replicate demo:
        https://replicate.com/someone/restorer
        """

        build:
          gpu: true
          cuda: "11.3"
          python_version: "3.8"
          system_packages:
            - "libgl1-mesa-glx"
          python_packages:
            - "lmdb==1.3.0"
            - "torch==1.11.0 --extra-index-url=https://download.pytorch.org/whl/cu113"
            - "torchvision==0.12.0 --extra-index-url=https://download.pytorch.org/whl/cu113"
            - "opencv-python==4.6.0.66"

        predict: "predict.py:Predictor"
        ''', parses=False)
    assert lines(found) == {7, 8, 14, 15}
    assert ("NPU028", 7) in {(f[0], f[1]) for f in found}
    index = [f for f in found if f[2] == "index:https://download.pytorch.org/whl/cu113"]
    assert lines(index) == {14, 15} and {f[4] for f in index} == {"device"}
    # the docstring is prose: the file still says it was not read whole
    result = ENGINE.analyze_bytes(b'"""\nnot yaml: a: b\n"""\nbuild:\n  gpu: true\n', "cog.yaml")
    assert result.error is not None and [f.line for f in result.findings] == [5]
    # a YAML file that opens with a quoted scalar and goes on with YAML on that line is not a docstring
    assert _blank('"""a""": 1\nb: 2') == []


def _blank(text: str):
    from auditor.project.configs import _blank_docstring
    return _blank_docstring(text.split("\n"))


def test_requirements_line_with_its_own_cpu_index_stays_a_plain_pin():
    found = audit("requirements.txt", """\
        torch==2.3.0 --extra-index-url https://download.pytorch.org/whl/cpu
        numpy==1.26.4
        torchvision==0.18.0 --index-url https://download.pytorch.org/whl/cu121
        """)
    assert lines(found) == {1, 3}
    assert not any(f[2].startswith("index:") for f in found if f[1] == 1)
    assert any(f[2] == "index:https://download.pytorch.org/whl/cu121" for f in found if f[1] == 3)


def test_amulet_job_file_asks_for_gpu_nodes():
    found = audit("run_pretrain.yaml", """\
        description: Multi-node pretraining

        # target:
        #  service: amlk8s
        #  name: itpa100cl

        target:
          vc: hcrr07
          service: amlk8s
          name: itphyperdgx2cl2

        environment:
          image: pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel

        jobs:
        - name: pretrain
          sku: G8
          sku_count: 1
          command:
            - pip install -r requirements.txt
            - python tools/train_net.py
        - name: prep
          sku: C4
        """)
    assert lines(found) == {10, 13, 17}
    assert {f[0] for f in found if f[1] in (10, 17)} == {"NPU028"}
    found = audit("job.yaml", """\
        target:
          service: sing
          name: msrresrchvc
        search:
          job_template:
            name: ft_{lr}
            sku: 40G8-A100
            sku_count: 2
        """)
    assert lines(found) == {7}
    # another tool's `sku` (an Azure VM or a storage tier) is not Amulet's
    assert audit("azure.yaml", """\
        storage:
          sku: Standard_LRS
        cluster:
          name: training-pool
        """) == []


def test_use_8bit_adam_selects_bitsandbytes():
    found = audit("stage2.yaml", """\
        solver:
          gradient_accumulation_steps: 1
          mixed_precision: 'no'
          enable_xformers_memory_efficient_attention: True
          gradient_checkpointing: True
          max_train_steps: 30000
          use_8bit_adam: True
        """)
    assert ("NPU441", 7) in {(f[0], f[1]) for f in found}
    assert audit("stage1.yaml", """\
        solver:
          use_8bit_adam: False
          learning_rate: 1.0e-5
        """) == []
    script = audit("train.sh", """\
        accelerate launch train_dreambooth.py \\
          --pretrained_model_name_or_path=$MODEL_NAME \\
          --use_8bit_adam \\
          --max_train_steps=800
        """)
    assert ("NPU441", 3) in {(f[0], f[1]) for f in script}


def test_downcast_bf16_is_tpu_only():
    found = audit("sft.yaml", """\
        compute_environment: LOCAL_MACHINE
        deepspeed_config:
          zero_stage: 2
        distributed_type: DEEPSPEED
        downcast_bf16: true
        mixed_precision: bf16
        num_processes: 8
        """)
    assert 5 not in lines(found)
    assert ("NPU212", 6) in {(f[0], f[1]) for f in found}


def test_force_cuda_is_kernel_work():
    found = audit("Dockerfile", """\
        ARG PYTORCH="1.9.0"
        FROM python:3.8
        ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"
        ENV FORCE_CUDA="1"
        RUN pip install mmcv-full==1.3.9
        """)
    by_line = {f[1]: (f[0], f[4]) for f in found}
    assert by_line[4] == ("NPU808", "kernel")
    assert by_line[3] == ("NPU021", "device")
    script = audit("install.sh", """\
        #!/bin/bash
        export FORCE_CUDA=1
        pip install -v -e .
        """)
    assert ("NPU808", 2, "kernel") in {(f[0], f[1], f[4]) for f in script}


def test_script_count_of_a_device_list_is_not_a_cuda_variable():
    found = audit("finetune.sh", """\
        TOT_CUDA="2,3"
        CUDAs=(${TOT_CUDA//,/ })
        CUDA_NUM=${#CUDAs[@]}
        PORT="12345"

        CUDA_VISIBLE_DEVICES=${TOT_CUDA} torchrun --nproc_per_node=$CUDA_NUM --master_port=$PORT finetune.py \\
        --data_path $DATA_PATH
        """)
    assert lines(found) == {6}
    assert {f[2] for f in found} == {"CUDA_VISIBLE_DEVICES"}
    # set to a length once and to a value elsewhere: a variable like any other
    found = audit("run.sh", """\
        CUDA_NUM=${#CUDAs[@]}
        export CUDA_NUM=4
        python train.py
        """)
    assert lines(found) == {1, 2}


def test_force_cuda_read_in_setup_py_stays_the_build_condition():
    found = audit("setup.py", """\
        import os
        import torch
        from setuptools import setup
        from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension, CppExtension

        if (torch.cuda.is_available() and CUDA_HOME is not None) or (
            os.getenv("FORCE_CUDA", "0") == "1"
        ):
            ext = CUDAExtension
        else:
            ext = CppExtension
        setup(name="ops", ext_modules=[ext("ops._C", ["csrc/ops.cpp"])])
        """)
    codes = {f[0] for f in found if f[1] == 7}
    assert "NPU021" in codes and "NPU808" not in codes
