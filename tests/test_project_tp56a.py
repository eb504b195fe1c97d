"""Project-file families of helper tp56a (session 56, issue 15; TUNED on test162 and session 55's test157 / test158):
each test is a realistic snippet written after real trees' files, with the lines that must be found and the quiet
control beside it."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())

# an install script saved as `requirements.txt` (a tracker repository's: run with `bash requirements.txt`)
_SCRIPT_REQUIREMENTS = """\
    #!/bin/bash

    # conda create -y -n pytorch python=3.8
    echo "****************** Installing pytorch with cuda10 ******************"
    conda install pytorch==1.7.0 cudatoolkit=10.0

    echo "****************** Installing matplotlib ******************"
    conda install -y matplotlib
    pip install opencv-python
    pip install mpi4py
    """


def test_requirements_txt_that_opens_with_a_shell_shebang_is_read_as_a_shell_script():
    found = line_codes(ENGINE, "requirements.txt", _SCRIPT_REQUIREMENTS)
    lines = {line for line, _ in found}
    assert 5 in lines                      # conda's cudatoolkit and its CUDA pytorch
    assert lines <= {5}, found             # the echo, the comment and the plain packages stay quiet


def test_requirements_txt_without_a_shebang_stays_a_pip_requirements_file():
    # control: a pip file (its first comment is no `#!` line) is read by pip's format, `torch` pinned
    found = line_codes(ENGINE, "requirements.txt", """\
        # requirements for training
        torch==1.7.0+cu101
        opencv-python
        """)
    assert {line for line, _ in found} == {2}
    # a `#!` line naming no shell (a Python one) does not make it a shell script either
    found = line_codes(ENGINE, "requirements.txt", """\
        #!/usr/bin/env python
        conda install pytorch==1.7.0 cudatoolkit=10.0
        """)
    assert found == []


# a notebook cell of an audio transformer's training (PyTorch Lightning 1.3): DDP over every visible GPU
_LIGHTNING_TRAIN = """\
    import torch
    import pytorch_lightning as pl

    device_num = torch.cuda.device_count()
    trainer = pl.Trainer(
        deterministic=False,
        default_root_dir="./workspace",
        gpus=device_num,
        val_check_interval=0.1,
        max_epochs=100,
        auto_lr_find=True,
        sync_batchnorm=True,
        accelerator="ddp" if device_num > 1 else None,
        num_sanity_val_steps=0,
        replace_sampler_ddp=False,
    )
    """


def test_lightning_1x_ddp_accelerator_keyword_is_a_distributed_finding_also_as_a_conditional_branch():
    found = line_codes(ENGINE, "train.py", _LIGHTNING_TRAIN)
    assert (13, "NPU997") in found
    assert not any(line == 15 for line, _ in found)      # the sampler switch names no backend


def test_lightning_ddp_cpu_and_a_projects_own_trainer_stay_quiet():
    found = line_codes(ENGINE, "train.py", """\
        import pytorch_lightning as pl
        from mylib.trainer import Trainer

        cpu_run = pl.Trainer(accelerator="ddp_cpu", num_processes=4)
        mine = Trainer(model, accelerator="ddp")
        other = pl.Trainer(accelerator="cpu" if debug else None)
        """)
    assert all(code != "NPU997" for _, code in found), found


def test_cuda_path_in_a_shell_variable_nothing_reads_is_quiet_and_the_nvcc_lines_carry_the_build():
    # a correlation layer's make script: the variable is never exported nor expanded, the nvcc lines spell the path
    found = line_codes(ENGINE, "make_cuda.sh", """\
        #!/usr/bin/env bash

        CUDA_PATH=/usr/local/cuda-8.0

        cd correlation_package/src
        echo "Compiling correlation layer kernels by nvcc..."
        /usr/local/cuda-8.0/bin/nvcc -c -o corr_cuda_kernel.cu.o corr_cuda_kernel.cu -x cu -Xcompiler -fPIC -arch=sm_52
        cd ../../
        python setup.py build install
        """)
    lines = {line for line, _ in found}
    assert 3 not in lines, found
    assert 7 in lines


def test_cuda_path_in_a_shell_variable_that_is_read_or_exported_is_still_found():
    # controls: the same assignment expanded by a later line, exported later, exported by `set -a`
    for line_of_path, script in ((1, """\
            CUDA_PATH=/usr/local/cuda-8.0
            nvcc -c kernel.cu -I $CUDA_PATH/include
            """), (1, """\
            CUDA_PATH=/usr/local/cuda-8.0
            export CUDA_PATH
            python setup.py build_ext
            """), (2, """\
            set -a
            CUDA_PATH=/usr/local/cuda-8.0
            python setup.py build_ext
            """)):
        found = line_codes(ENGINE, "build.sh", script)
        assert any(line == line_of_path for line, _ in found), (script, found)
