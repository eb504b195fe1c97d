"""test26 / test27's project-file families (t20b, issue 15), each on a file written the way the labelled one is."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_bare_export_of_a_cuda_variable(engine):
    # LLMxMapReduce's start_gunicorn.sh: options parsed into variables, then `export NAME` of each
    src = """\
        while [[ "$#" -gt 0 ]]; do
          case $1 in
            --cuda-visible-devices) CUDA_VISIBLE_DEVICES="$2"; shift ;;
            --port) PORT="$2"; shift ;;
          esac
          shift
        done
        export PORT
        export CUDA_VISIBLE_DEVICES
        declare -x PYTORCH_CUDA_ALLOC_CONF
        gunicorn -c gunicorn_conf.py
        """
    found = codes_by_line(engine, src, "start_gunicorn.sh")
    assert "NPU004" in found[line_of(src, "export CUDA_VISIBLE_DEVICES")]
    assert found.get(line_of(src, "declare -x"))
    assert not found.get(line_of(src, "export PORT"))


def test_cuda_samples_helper_include_is_where_a_kernel_less_cu_file_starts(engine):
    # 3DTopia-XL's mvpraymarch_kernel.cu: host code launching kernels of its headers; NVIDIA cuda-samples'
    # helper_math.h (CUDA vector-type operators) is its first CUDA include, before the project's cudadispatch.h
    src = """\
        // Copyright (c) Meta Platforms, Inc. and affiliates.
        #include <functional>
        #include <vector>

        #include "helper_math.h"

        #include "cudadispatch.h"

        #include "utils.h"

        typedef std::function<void(dim3, dim3, cudaStream_t, int)> mapfn_t;
        """
    found = codes_by_line(engine, src, "extensions/mvpraymarch/mvpraymarch_kernel.cu")
    assert "NPU372" in found[line_of(src, '"helper_math.h"')]
    assert not found.get(line_of(src, '"cudadispatch.h"'))


def test_environment_pip_entry_of_a_submodule_not_checked_out(tmp_path):
    # 2d-gaussian-splatting: environment.yml's pip list installs two git submodules by path; a checkout without
    # `--recursive` has empty folders, and .gitmodules names the CUDA rasteriser / KNN repositories
    from static_snippets import tree_codes_by_line, write_tree

    env = textwrap.dedent("""\
        name: surfel_splatting
        channels:
          - pytorch
          - conda-forge
        dependencies:
          - python=3.8
          - pip:
            - submodules/diff-surfel-rasterization
            - submodules/simple-knn
            - submodules/my-utils
            - open3d==0.18.0
        """)
    root = write_tree(tmp_path / "2dgs", {
        "environment.yml": env,
        ".gitmodules": textwrap.dedent("""\
            [submodule "submodules/diff-surfel-rasterization"]
            \tpath = submodules/diff-surfel-rasterization
            \turl = https://github.com/hbb1/diff-surfel-rasterization.git
            [submodule "submodules/simple-knn"]
            \tpath = submodules/simple-knn
            \turl = https://gitlab.inria.fr/bkerbl/simple-knn.git
            [submodule "submodules/my-utils"]
            \tpath = submodules/my-utils
            \turl = https://github.com/someone/my-utils.git
            """),
    })
    for sub in ("diff-surfel-rasterization", "simple-knn", "my-utils"):
        (root / "submodules" / sub).mkdir(parents=True)
    found = tree_codes_by_line(root, "environment.yml")
    assert "NPU370" in found[line_of(env, "diff-surfel-rasterization")]
    assert "NPU370" in found[line_of(env, "simple-knn")]
    assert not found.get(line_of(env, "my-utils"))      # a package the CUDA patterns do not know: nothing to say


_KNN_SETUP = """\
    import glob
    import os

    import torch
    from setuptools import find_packages, setup
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


    def get_extensions():
        extensions_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
        sources = glob.glob(os.path.join(extensions_dir, "*.cpp"))
        source_cuda = glob.glob(os.path.join(extensions_dir, "*.cu"))
        extension = CppExtension
        if torch.cuda.is_available() and CUDA_HOME is not None:
            extension = CUDAExtension
            sources += source_cuda
        else:
            raise NotImplementedError("Cuda is not available")
        return [extension("KNN", sources)]


    setup(name="KNN", version="0.1", ext_modules=get_extensions(), packages=find_packages(),
          cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension})
    """
_CPU_FALLBACK_SETUP = _KNN_SETUP.replace('raise NotImplementedError("Cuda is not available")', 'print("CPU only")')


def test_setup_py_build_beside_the_script_that_raises_without_cuda(tmp_path):
    # UniDepth's unidepth/ops/knn/compile.sh: `python setup.py build install` next to a setup.py with no CPU build
    from static_snippets import tree_codes_by_line, write_tree

    script = """\
        #!/usr/bin/env bash

        export TORCH_CUDA_ARCH_LIST="6.1 7.0 7.5 8.0 8.6 8.7 8.9 9.0+PTX"
        python setup.py build install
        """
    root = write_tree(tmp_path / "unidepth", {
        "setup.py": "from setuptools import setup\nsetup(name='unidepth')\n",
        "install.sh": "pip install -e .\npython setup.py develop\n",
        "unidepth/ops/knn/setup.py": _KNN_SETUP, "unidepth/ops/knn/compile.sh": script,
        "unidepth/ops/other/setup.py": _CPU_FALLBACK_SETUP, "unidepth/ops/other/compile.sh": script,
    })
    build = line_of(textwrap.dedent(script), "python setup.py")
    assert "NPU370" in tree_codes_by_line(root, "unidepth/ops/knn/compile.sh")[build]
    # a CppExtension fallback builds anywhere; the root's own install is the root setup.py's, audited on its own
    assert not tree_codes_by_line(root, "unidepth/ops/other/compile.sh").get(build)
    assert not tree_codes_by_line(root, "install.sh")


def test_torch_memory_saver_dependency(engine):
    # OpenManus-RL (verl) setup.py: the sglang extra pins torch-memory-saver, a cudaMalloc hook
    src = """\
        from setuptools import find_packages, setup

        SGLANG_REQUIRES = [
            "tensordict<=0.6.2",
            "sglang[srt,openai]==0.4.6.post5",
            "torch-memory-saver>=0.0.5",
            "torch==2.6.0",
        ]
        setup(name="verl", packages=find_packages(), extras_require={"sglang": SGLANG_REQUIRES})
        """
    found = codes_by_line(engine, src, "setup.py")
    assert "NPU440" in found[line_of(src, "torch-memory-saver")]
    assert "NPU440" in codes_by_line(engine, "torch_memory_saver==0.0.6\n", "requirements.txt")[1]


def test_dockerfile_cuda_cub_pytorch3d_wheel_folder_and_cudart_link(engine):
    # ER-NeRF's Dockerfile: NVIDIA CUB from the bottler channel, pytorch3d from its py/cu/pyt wheel folder, and a
    # link of the conda CUDA runtime into /usr/lib
    src = """\
        FROM ubuntu:20.04
        RUN conda install -c fvcore -c iopath -c conda-forge fvcore iopath -y
        RUN conda install -c bottler nvidiacub -y
        RUN pip install --no-index --no-cache-dir pytorch3d -f https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/py310_cu117_pyt1131/download.html
        RUN echo 'export LD_LIBRARY_PATH="$CONDA_PREFIX/lib"' >> ~/.bashrc
        RUN ln -s $CONDA_PREFIX/lib/libcudart.so /usr/lib/libcudart.so
        RUN ln -s /usr/lib/x86_64-linux-gnu/libjpeg.so /usr/lib/libjpeg.so
        RUN pip install pytorch3d -f https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/py310_cpu_pyt1131/download.html
        """
    found = codes_by_line(engine, src, "Dockerfile")
    assert "NPU018" in found[line_of(src, "nvidiacub")]
    assert not found.get(line_of(src, "fvcore iopath"))
    assert "NPU440" in found[line_of(src, "py310_cu117_pyt1131")]
    assert "NPU092" in found[line_of(src, "libcudart.so")]
    assert not found.get(line_of(src, "libjpeg.so"))
    assert not found.get(line_of(src, "py310_cpu_pyt1131"))


def test_ray_gpus_openrlhf_vllm_engines(engine):
    # LIMR's train_limr.sh: Ray head / worker nodes with 8 GPUs each, then OpenRLHF's PPO with 4 vLLM engines
    src = """\
        if [ "$PET_NODE_RANK" -eq 0 ]; then
            echo "Starting Ray head node on $(hostname)"
            ray start --head  --port=$RAY_MASTER_PORT --dashboard-host=127.0.0.1 --dashboard-port=$RAY_DASHBOARD_PORT --num-gpus 8
        else
            ray start --address="$MASTER_ADDR:$RAY_MASTER_PORT" --num-gpus 8 --block
        fi
        ray start --head --num-gpus 0
        RAY_ADDRESS="http://127.0.0.1:$RAY_DASHBOARD_PORT" ray job submit --address="http://$MASTER_ADDR:$MASTER_PORT" \\
            --runtime-env-json='{"working_dir": "path/to/limr"}' \\
            -- python3 -m openrlhf.cli.train_ppo_ray \\
            --ref_num_nodes 1 \\
            --vllm_num_engines 4 \\
            --vllm_tensor_parallel_size 1 \\
            --save_steps 1
        python3 -m openrlhf.cli.train_ppo_ray --vllm_num_engines 0 --save_steps 1
        """
    found = codes_by_line(engine, src, "scripts/train_limr.sh")
    assert "NPU093" in found[line_of(src, "ray start --head  --port")]
    assert "NPU093" in found[line_of(src, "--num-gpus 8 --block")]
    assert not found.get(line_of(src, "--num-gpus 0"))
    assert "NPU447" in found[line_of(src, "--vllm_num_engines 4")]
    assert not found.get(line_of(src, "--vllm_num_engines 0"))


def test_verl_rollout_engine_from_a_parameter_default(engine):
    # OpenManus-RL's train_alfworld.sh: ENGINE=${1:-vllm}; a `\\ # TODO` comment ends the python command early, so
    # the later overrides are a command of their own (bash runs them as one and fails; the intent is the launch's)
    src = """\
        set -x
        ENGINE=${1:-vllm}
        MODE=$2
        python3 -m verl.trainer.main_ppo \\
            algorithm.adv_estimator=gae \\
            data.train_files=/data/train.parquet \\ # TODO: change to the correct path
            data.val_files=/data/test.parquet \\ # TODO: change to the correct path
            data.train_batch_size=$train_data_size \\
            actor_rollout_ref.rollout.tensor_model_parallel_size=1 \\
            actor_rollout_ref.rollout.name=$ENGINE \\
            actor_rollout_ref.rollout.mode=$MODE \\
            trainer.n_gpus_per_node=2
        python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=hf trainer.total_epochs=1
        python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang trainer.total_epochs=1
        """
    found = codes_by_line(engine, src, "scripts/ppo_train/train_alfworld.sh")
    assert "NPU447" in found[line_of(src, "rollout.name=$ENGINE")]
    assert not found.get(line_of(src, "rollout.mode=$MODE"))
    assert not found.get(line_of(src, "rollout.name=hf"))
    assert "NPU447" in found[line_of(src, "rollout.name=sglang")]



def test_server_script_engine_and_quantization_defaults(engine):
    # LLMxMapReduce's start_gunicorn.sh: defaults set before the option parsing, exported to the gunicorn app
    src = """\
        #!/bin/bash
        HF_MODEL_NAME="your/model/path"
        PORT=5002 # Default port
        INFER_TYPE="vLLM" # The default inference type is "vLLM" or "transformers".
        QUANTIZATION=awq
        MAX_MODEL_LEN=None
        INFER_TYPE_FALLBACK="transformers"
        export INFER_TYPE
        export QUANTIZATION
        gunicorn -c URLs/gunicorn_conf.py
        vllm serve $HF_MODEL_NAME --quantization None
        """
    found = codes_by_line(engine, src, "URLs/start_gunicorn.sh")
    assert "NPU447" in found[line_of(src, 'INFER_TYPE="vLLM"')]
    assert "NPU441" in found[line_of(src, "QUANTIZATION=awq")]
    assert not found.get(line_of(src, "INFER_TYPE_FALLBACK"))
    assert "NPU441" not in found.get(line_of(src, "--quantization None"), set())


_GUNICORN_SH = """\
    #!/bin/bash
    HF_MODEL_NAME="your/model/path"
    PER_PROC_GPUS=1
    CUDA_VISIBLE_DEVICES="0,1,2,6"
    INFER_TYPE="vLLM" # The default inference type is "vLLM" or "transformers".
    QUANTIZATION=awq
    options=$(getopt -o "" --long hf-model-name:,per-proc-gpus:,cuda-visible-devices:,infer-type:,quantization: -- "$@")
    eval set -- "$options"
    while true; do
        case $1 in
            --hf-model-name)
                HF_MODEL_NAME=$2
                shift 2
                ;;
            --per-proc-gpus)
                PER_PROC_GPUS=$2
                shift 2
                ;;
            --cuda-visible-devices)
                CUDA_VISIBLE_DEVICES=$2
                shift 2
                ;;
            --infer-type)
                INFER_TYPE=$2
                shift 2
                ;;
            --quantization)
                QUANTIZATION=$2
                shift 2
                ;;
            --)
                shift
                break
                ;;
        esac
    done
    export CUDA_VISIBLE_DEVICES
    export INFER_TYPE
    export QUANTIZATION
    gunicorn -c URLs/gunicorn_conf.py
    """


def test_wrapper_options_and_defaults_of_a_called_script(tmp_path):
    # LLMxMapReduce's URLs/scripts/start_*.sh: one line each, running start_gunicorn.sh with some of its options
    from static_snippets import tree_codes_by_line, write_tree

    root = write_tree(tmp_path / "mapreduce", {
        "URLs/start_gunicorn.sh": _GUNICORN_SH,
        "URLs/scripts/start_a.sh": "bash URLs/start_gunicorn.sh --hf-model-name m --per-proc-gpus 2 --quantization None "
                                   "--cuda-visible-devices 0,1,2,3\n",
        "URLs/scripts/start_b.sh": "bash URLs/start_gunicorn.sh --hf-model-name m --infer-type transformers "
                                   "--quantization None --cuda-visible-devices 0\n",
        "URLs/scripts/start_c.sh": 'bash URLs/start_gunicorn.sh "$@"\n',
    })
    assert tree_codes_by_line(root, "URLs/scripts/start_a.sh")[1] >= {"NPU004", "NPU447"}
    assert "NPU441" not in tree_codes_by_line(root, "URLs/scripts/start_a.sh")[1]   # `--quantization None` passed
    b = tree_codes_by_line(root, "URLs/scripts/start_b.sh")[1]
    assert "NPU004" in b and "NPU447" not in b                  # the engine is chosen: transformers
    assert not tree_codes_by_line(root, "URLs/scripts/start_c.sh")   # the caller's own options: unknown


_ROCM_SERVE = """\
    #!/bin/bash
    # Enter the container and start vLLM
    docker exec -it openmanus-rl bash -c '
    # Set up environment variables for ROCm
    export TRANSFORMERS_NO_TORCHVISION=1
    export VLLM_USE_ROCM=1
    export VLLM_PLATFORM=rocm
    vllm serve /root/models/GiGPO-Qwen2.5-7B-Instruct-ALFWorld \\
      --dtype bfloat16 \\
      --tensor-parallel-size 1 \\
      --device cuda \\
      --host 0.0.0.0 --port 8000
    '
    """


def test_script_for_the_rocm_container(engine):
    # OpenManus-RL's serve_model.sh: vLLM in the AMD container; `--device cuda` is PyTorch's name for ROCm GPUs too
    assert not codes_by_line(engine, _ROCM_SERVE, "scripts/serve_model.sh")
    # the same lines in a script that also sets up the NVIDIA stack are read as usual
    both = _ROCM_SERVE.replace("export VLLM_USE_ROCM=1", "export CUDA_VISIBLE_DEVICES=0")
    assert codes_by_line(engine, both, "scripts/serve_model.sh")


def test_config_choice_of_a_triton_implementation(engine):
    # Depth-Anything-3's da3_streaming configs: the Sim(3) alignment library
    src = """\
        Weights:
          DA3: './weights/model.safetensors'
        Model:
          chunk_size: 120
          align_lib: 'triton' # choose among 'triton' (GPU), 'torch' (GPU), 'numba' (CPU) or 'numpy' (CPU)
          align_method: 'sim3'
          loop_lib: 'torch'
        """
    found = codes_by_line(engine, src, "da3_streaming/configs/base_config.yaml")
    assert "NPU360" in found[line_of(src, "align_lib")]
    assert not found.get(line_of(src, "loop_lib"))
