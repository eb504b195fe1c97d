"""Project-file recall of helper tp57a (session 57, issue 15; TUNED on test160 and test161): each test is a realistic
snippet written after real trees' files, with the lines that must be found and the quiet control beside it."""
from __future__ import annotations

import json
import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())

# a sweep script that submits one Slurm job per dataset and section, the GPU count held in a variable
_SWEEP = """\
    #!/bin/bash
    for dataset in mimic-cxr chexpert
    do
      for mode in impression findings
      do
        NUM_GPUS=4
        NAME=report_${dataset}_${mode}
        echo "Submitting job: $NAME"
        sbatch --time=24:00:00 --gpus=$NUM_GPUS --cpus-per-task=16 --mem=128G --job-name="${NAME}" \\
        --wrap "source ~/miniconda3/etc/profile.d/conda.sh
        conda activate rrg
        accelerate launch --num_processes $NUM_GPUS train.py --dataset $dataset"
      done
    done
    """


def test_slurm_gpu_count_glued_to_its_option_through_a_variable_is_a_gpu_request():
    found = line_codes(ENGINE, "run_sweep.sh", _SWEEP)
    assert (9, "NPU028") in found
    assert not any(line in (6, 7, 8) for line, _ in found), found


def test_glued_option_with_a_variable_reads_the_same_as_the_spaced_one():
    # `--gpus $N` and `--gpus=$N` are one option; a variable holding 0 asks for none, an unassigned one stays unread
    found = line_codes(ENGINE, "submit.sh", """\
        N=0
        sbatch --gpus=$N --wrap "python eval.py"
        sbatch --gpus=$UNSET --wrap "python eval.py"
        M=2
        sbatch --gpus $M --wrap "python eval.py"
        """)
    assert found == [(5, "NPU028")], found


# a training launcher that logs the device choice next to its run log
_LOGGED = """\
    #!/bin/bash

    export CUDA_VISIBLE_DEVICES=1

    ROOT="/home/app/da"
    LOG_FILE="${ROOT}/log/dann-`date +'%Y-%m-%d-%H-%M-%S'`.log"

    echo "GPU: $CUDA_VISIBLE_DEVICES" > ${LOG_FILE}
    echo "devices: $CUDA_VISIBLE_DEVICES" | tee -a $LOG
    echo "devices: $CUDA_VISIBLE_DEVICES" >> logs/train.log
    python ${ROOT}/trainer/train.py --config ${ROOT}/config/dann.yml >> ${LOG_FILE} 2>&1
    """


def test_echo_of_a_cuda_variable_into_a_run_log_is_a_message():
    found = line_codes(ENGINE, "train.sh", _LOGGED)
    assert (3, "NPU004") in found
    assert not any(line in (8, 9, 10) for line, _ in found), found


def test_echo_into_a_setting_file_still_sets_it():
    # control: what is written into a shell rc file, a script, the environment file or a plain data file is read later
    found = line_codes(ENGINE, "setup_env.sh", """\
        echo "export CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES" >> ~/.bashrc
        echo "export CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES" >> $LOGDIR/env.sh
        echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES" | sudo tee -a /etc/environment
        echo "$CUDA_VISIBLE_DEVICES" > catalog.txt
        """)
    assert {line for line, _ in found} == {1, 2, 3, 4}, found


# BVLC Caffe's docker wrapper for its MNIST example: the GPU mode picks nvidia-docker
_CAFFE_DOCKER = """\
    #!/usr/bin/env sh
    set -e

    if [ ${GPU:-0} -eq 1 ]
    then
    DOCKER_CMD=nvidia-docker
    IMAGE=caffe:gpu
    else
    DOCKER_CMD=docker
    IMAGE=caffe:cpu
    fi
    echo "Using $DOCKER_CMD to launch $IMAGE"

    DOCKER_OPTIONS="--rm -ti -u $(id -u):$(id -g) -v $(pwd):/workspace -w /workspace"
    DOCKER_RUN="$DOCKER_CMD run $DOCKER_OPTIONS $IMAGE"

    $DOCKER_RUN ./build/tools/caffe train --solver=examples/mnist/lenet_solver.prototxt
    """


def test_variable_holding_an_nvidia_program_that_the_script_runs_is_reported_where_it_is_chosen():
    found = line_codes(ENGINE, "train_lenet_docker.sh", _CAFFE_DOCKER)
    assert (6, "NPU017") in found
    assert not any(line in (7, 9, 10, 12) for line, _ in found), found


def test_variable_holding_an_nvidia_program_only_printed_runs_nothing():
    found = line_codes(ENGINE, "report.sh", """\
        TOOL=nvidia-smi
        echo "monitor with $TOOL"
        """)
    assert found == [], found


def test_minkowski_engine_pin_is_a_cuda_only_library():
    found = line_codes(ENGINE, "requirements.txt", """\
        open3d==0.17.0
        MinkowskiEngine==0.5.4
        scipy==1.10.1
        """)
    assert found == [(2, "NPU440")], found
    result = ENGINE.analyze_bytes(b"MinkowskiEngine==0.5.4\n", "requirements.txt")
    assert [f.severity for f in result.findings] == ["warning"]


def test_caffe_gpu_mode_in_python():
    found = line_codes(ENGINE, "solve.py", """\
        import caffe
        from caffe.proto import caffe_pb2

        caffe.set_device(0)
        caffe.set_mode_gpu()
        s = caffe_pb2.SolverParameter()
        s.solver_mode = caffe_pb2.SolverParameter.GPU
        solver = caffe.get_solver("solver.prototxt")
        """)
    assert found == [(5, "NPU999"), (7, "NPU999")], found


# a cell of Caffe's LeNet notebook: Python 2 (print statements) around the solver's settings
_PY2_CELL = """\
    from caffe.proto import caffe_pb2
    s = caffe_pb2.SolverParameter()
    s.max_iter = 10000
    s.solver_mode = caffe_pb2.SolverParameter.GPU

    solver = caffe.get_solver(solver_config_path)
    for it in range(niter):
        solver.step(1)
        if it % test_interval == 0:
            print 'Iteration', it, 'testing...'
            correct = 0
    print
    print >>sys.stderr, 'done'
    """


def test_python2_print_statements_do_not_hide_a_file():
    result = ENGINE.analyze_bytes(textwrap.dedent(_PY2_CELL).encode(), "lenet.py")
    assert [(f.line, f.code) for f in result.findings] == [(4, "NPU999")]
    assert result.error is not None and "print statement" in result.error.message
    assert all(f.fix == "none" for f in result.findings)


def test_python2_print_statements_in_a_notebook_cell():
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": textwrap.dedent(src)} for src in ("import caffe\ncaffe.set_mode_gpu()\n", _PY2_CELL)]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 2}
    result = ENGINE.analyze_bytes(json.dumps(nb).encode(), "01-learning-lenet.ipynb")
    assert sorted((f.line, f.code) for f in result.findings) == [(2, "NPU999"), (6, "NPU999")]
