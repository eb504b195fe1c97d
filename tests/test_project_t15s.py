"""Project-file families behind the misses and wrong findings of the first run on split tuned_t15s (issue 15, t15s:
a fresh tuning sample of eight repositories; tuned on that split): each test is a realistic snippet, written after
the repository's own file, with the lines that must be found and the lines that must not."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_nsight_from_nvidias_devtools_repository_and_ngc_build_metadata():
    # NeMo-RL docker/Dockerfile: a BuildKit heredoc adds NVIDIA's devtools apt repository and installs Nsight
    # Systems; the release stage records NGC build metadata
    dockerfile = """\
        ARG BASE_IMAGE=nvcr.io/nvidia/cuda-dl-base:25.05-cuda12.9-devel-ubuntu24.04
        FROM ${BASE_IMAGE} AS base
        RUN <<"EOF" bash -exu -o pipefail
        apt-get update
        # Nsight
        apt install -y --no-install-recommends gnupg
        echo "deb http://developer.download.nvidia.com/devtools/repos/ubuntu$(lsb_release -rs | tr -d .)/$(arch) /" | tee $LIST
        apt update
        apt install -y nsight-systems-cli
        apt-get clean
        EOF
        FROM base AS release
        ARG NVIDIA_BUILD_ID
        ARG NVIDIA_BUILD_REF
        ENV NVIDIA_BUILD_ID=${NVIDIA_BUILD_ID:-<unknown>}
        LABEL com.nvidia.build.id="${NVIDIA_BUILD_ID}"
        ENV NVIDIA_VISIBLE_DEVICES=all
        """
    got = found("docker/Dockerfile", dockerfile)
    assert (7, "NPU071") in got and (9, "NPU071") in got
    assert not [f for f in got if f[0] in (4, 5, 6, 8, 10, 13, 14, 15, 16)]   # apt, comments, NGC build metadata
    assert (17, "NPU004") in got                          # the container runtime's own variable is still read


def test_nvidia_docs_theme_is_not_a_cuda_library():
    # NeMo-RL pyproject.toml: the docs group's Sphinx theme beside real NVIDIA-only dependencies
    pyproject = """\
        [project]
        name = "nemo-rl"
        dependencies = ["torch==2.7.0", "ray[default]==2.46.0", "nvidia-ml-py", "hydra-core"]

        [dependency-groups]
        docs = [
            "sphinx",
            "myst_parser",
            "nvidia-sphinx-theme",  # Our NVIDIA theme
        ]
        """
    got = found("pyproject.toml", pyproject)
    assert (3, "NPU440") in got                           # nvidia-ml-py: NVML
    assert not [f for f in got if f[0] == 9]


def test_cuda_image_package_variables_and_the_nvidia_backend_build():
    # FlagCX Dockerfile: NVIDIA's CUDA-image cuDNN block (old `ENV NAME value` form) and the NVIDIA adaptor build
    dockerfile = """\
        ARG CUDA_VERSION=12.4.1
        FROM nvcr.io/nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04
        ENV TZ=Asia/Shanghai
        ENV NV_CUDNN_PACKAGE_NAME libcudnn9-cuda-12
        ENV NV_CUDNN_PACKAGE libcudnn9-cuda-12=${NV_CUDNN_VERSION}
        ENV NV_CUDNN_PACKAGE_DEV libcudnn9-dev-cuda-12=${NV_CUDNN_VERSION}
        RUN apt-get update && apt-get install -y --no-install-recommends ${NV_CUDNN_PACKAGE} ${NV_CUDNN_PACKAGE_DEV}
        ENV STAGE_DIR /tmp
        RUN cd /workspace && git clone https://github.com/FlagOpen/FlagCX.git && cd FlagCX && make USE_NVIDIA=1
        """
    got = found("Dockerfile", dockerfile)
    assert {(4, "NPU072"), (5, "NPU072"), (6, "NPU072"), (9, "NPU021")} <= set(got)
    assert not [f for f in got if f[0] in (3, 8)]
    script = """\
        #!/bin/bash
        TYPE=$1
        if [[ "$TYPE" == "nvidia" ]]; then
            USE_NVIDIA=1 make -j32
        elif [[ "$TYPE" == "ascend" ]]; then
            USE_ASCEND=1 make -j32
        fi
        make USE_CUDA=0 -j8
        """
    got = found("test/script/test.sh", script)
    assert (4, "NPU021") in got
    assert not [f for f in got if f[0] in (6, 8)]         # the Ascend build, and CUDA switched off


def test_dgx_targets_whose_anchors_live_in_another_file():
    # NVIDIA DeepLearningExamples' BERT `configurations.yml` (copied into Pretrained-Language-Model's CAME): the
    # anchors are defined in a file the CI concatenates in front, so alone it is YAML with undefined aliases
    config = """\
        # Copyright (c) 2018-2019, NVIDIA CORPORATION. All rights reserved.

        #1 DGX1 phase1
        bert--DGX1:
          <<: *BERT_ON_CLUSTER
          <<: *DGX1
          variables:
            <<: *DGX1_VARS
            NNODES: "1"
            BATCHSIZE: "8192"

        #4 DGX2 phase2
        bert--DGX2_4x16x8x64:
          <<: *BERT_ON_CLUSTER
          <<: *DGX2
          variables:
            <<: *DGX2_VARS
            NNODES: "4"
        """
    got = found("CAME/configurations.yml", config)
    assert (6, "NPU028") in got and (15, "NPU028") in got
    assert not [f for f in got if f[0] not in (6, 15)]    # the other anchors, counts and comments
    # a file whose anchors are its own reads as before
    own = """\
        defaults: &defaults
          device: cuda
        train:
          <<: *defaults
          batch_size: 8
        """
    assert (2, "NPU019") in found("config.yaml", own)


def test_overrides_of_a_script_run_by_uv_and_gpu_monitoring_switches():
    # NeMo-RL tests/functional/sft.sh and a test-suite launch
    script = """\
        #!/bin/bash
        cd $PROJECT_ROOT
        uv run $PROJECT_ROOT/examples/run_sft.py \\
            policy.model_name=Qwen/Qwen3-0.6B \\
            cluster.gpus_per_node=2 \\
            logger.monitor_gpus=True \\
            logger.wandb_enabled=false \\
            2>&1 | tee $RUN_LOG
        uv run tests/json_dump_tb_logs.py $LOG_DIR --output_path $JSON_METRICS
        """
    got = found("tests/functional/sft.sh", script)
    assert (5, "NPU022") in got and (6, "NPU073") in got
    assert not [f for f in got if f[0] in (4, 7, 9)]
    # NeMo-RL recipe config and a Lightning 1.x trainer config (ColossalAI's diffusion example)
    config = """\
        logger:
          wandb_enabled: true
          monitor_gpus: true
          gpu_monitoring:
            collection_interval: 10
        lightning:
          trainer:
            log_gpu_memory: all
        eval:
          log_gpu_memory: null
        """
    got = found("config.yaml", config)
    assert (3, "NPU073") in got and (8, "NPU073") in got
    assert not [f for f in got if f[0] in (4, 5, 10)]


def test_cuda_file_whose_kernels_hide_behind_project_macros():
    # FlagCX flagcx/kernels/flagcx_kernel_device.cu: only project headers, decorators are macros, but the file
    # writes device code of its own
    source = """\
        #include "comm.h"
        #include "flagcx.h"
        #include "flagcx_kernel.h"

        FLAGCX_DEVICE_INLINE_DECORATOR void spinBackoff(int iter) {
          int delay = 1 << (iter < 15 ? iter : 15);
        #if __CUDA_ARCH__ >= 700
          __nanosleep(delay);
        #else
          uint64_t start = clock64();
          while (clock64() - start < (uint64_t)delay) { /* spin */
          }
        #endif
        }
        """
    got = found("flagcx/kernels/flagcx_kernel_device.cu", source)
    assert [f for f in got if f[1] == "NPU372"] == [(7, "NPU372")]
    # flash-attention's instantiation files still point at their project header
    inst = """\
        // Copyright (c) 2024, Tri Dao.
        #include "flash_fwd_launch_template.h"

        template<>
        void run_mha_fwd_<cutlass::half_t, 128, false>(Flash_fwd_params &params, cudaStream_t stream) {
            run_mha_fwd_hdim128<cutlass::half_t, false>(params, stream);
        }
        """
    got = found("csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.cu", inst)
    assert [f for f in got if f[1] == "NPU372"] == [(2, "NPU372")]


def test_a_projects_own_use_cuda_option_in_its_model_config_is_not_a_build_switch():
    # ClearerVoice-Studio's inference YAML (heldout17): `use_cuda: 1` is the option its argparse also reads, a device
    # choice of the project's own, not a build's `USE_CUDA=1`; an environment-style upper-case key still is
    config = """\
        mode: 'inference'
        use_cuda: 1
        num_gpu: 1
        network: "MossFormerGAN_SE_16K"
        """
    assert not [f for f in found("clearvoice/config/inference/MossFormerGAN_SE_16K.yaml", config) if f[1] == "NPU021"]
    assert (1, "NPU021") in found("build/env.yaml", "USE_CUDA: 1\n")
