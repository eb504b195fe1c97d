"""t36b (issue 15, session 34; project test67 / test69, TUNED): commands that run the rest of their words as a
command after their own options and one operand (`screen -dm bash -c "..."`, `timeout 30 ...`, `taskset -c 0-11 ...`);
a lower-case top-level key of a plain YAML config that the code reads key by key, never that key (StyleTTS2's
`device: "cuda"` beside `config.get(...)` of every other key), with controls."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.test_project_t23c import _codes, _tree  # one tree writer and one bench-shaped reading of a config

_ENGINE = StaticEngine(load_rules())


def _audit(name: str, text: str) -> list[tuple[str, int, str]]:
    result = _ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol) for f in result.findings]


def test_commands_run_under_screen_timeout_and_taskset_are_read():
    assert _audit("jobs.sh", """\
        # lsf22-gpu01
        screen -dm bash -c ". ~/load_env_torch224.sh && CUDA_VISIBLE_DEVICES=3 nnUNetv2_train 3 3d_fullres 0 -tr nnUNetTrainer"
        screen -S fold1 -dm bash -c "CUDA_VISIBLE_DEVICES=4 nnUNetv2_train 4 3d_fullres 1"
        timeout 30 bash -c "until nvidia-smi; do sleep 1; done"
        timeout -k 5 "${TIMEOUT_MINUTES}m" nvidia-smi
        timeout $TIMEOUT nvidia-smi
        taskset -c 0-11 nvidia-smi
        """) == [("NPU004", 2, "CUDA_VISIBLE_DEVICES"), ("NPU004", 3, "CUDA_VISIBLE_DEVICES"),
                 ("NPU017", 4, "nvidia-smi"), ("NPU017", 5, "nvidia-smi"), ("NPU017", 6, "nvidia-smi"),
                 ("NPU017", 7, "nvidia-smi")]


def test_wrappers_without_a_command_comments_and_messages_are_quiet():
    assert _audit("jobs.sh", """\
        # screen -dm bash -c "CUDA_VISIBLE_DEVICES=3 nnUNetv2_train 3 3d_fullres 0"
        echo "run: screen -dm bash -c CUDA_VISIBLE_DEVICES=3 nnUNetv2_train"
        screen -r fold1
        screen -S fold1 -X quit
        timeout 30
        timeout=${1:-120}
        taskset -p 4242
        timeout 30 bash -c "until curl -s http://localhost:8000/v1/models; do sleep 1; done"
        """) == []


# StyleTTS2's train_first.py and Configs/config.yml, cut down: the device comes from accelerate, never the config
STYLETTS_TRAIN = """\
    import yaml
    from accelerate import Accelerator


    def main(config_path):
        config = yaml.safe_load(open(config_path))
        log_dir = config['log_dir']
        accelerator = Accelerator(project_dir=log_dir, split_batches=True)
        batch_size = config.get('batch_size', 10)
        device = accelerator.device
        epochs = config.get('epochs_1st', 200)
        save_freq = config.get('save_freq', 2)
        log_interval = config.get('log_interval', 10)
        max_len = config.get('max_len', 200)
        data_params = config.get('data_params', None)
        return device, batch_size, epochs, save_freq, log_interval, max_len, data_params
    """
STYLETTS_CONFIG = """\
    log_dir: "Models/LJSpeech"
    save_freq: 2
    log_interval: 10
    device: "cuda"
    epochs_1st: 200 # number of epochs for first stage training (pre-training)
    batch_size: 16
    max_len: 400 # maximum number of frames
    data_params:
      train_data: "Data/train_list.txt"
    """


def test_a_device_key_of_a_plain_config_read_key_by_key_is_dropped(tmp_path):
    root = _tree(tmp_path, {"train_first.py": STYLETTS_TRAIN, "Configs/config.yml": STYLETTS_CONFIG})
    assert (4, "NPU019") not in _codes(root, "Configs/config.yml")


def test_the_device_key_read_by_the_code_or_a_config_read_for_two_keys_stays(tmp_path):
    reads_device = STYLETTS_TRAIN.replace("device = accelerator.device", "device = config.get('device', 'cpu')")
    root = _tree(tmp_path / "read", {"train_first.py": reads_device, "Configs/config.yml": STYLETTS_CONFIG})
    assert (4, "NPU019") in _codes(root, "Configs/config.yml")
    # two keys read of seven: the rest may be a library's (an accelerate-style file), as t25b's control
    two_keys = """\
        import yaml
        config = yaml.safe_load(open("Configs/config.yml"))
        print(config['log_dir'], config.get('batch_size'))
        """
    root = _tree(tmp_path / "two", {"train_first.py": two_keys, "Configs/config.yml": STYLETTS_CONFIG})
    assert (4, "NPU019") in _codes(root, "Configs/config.yml")
    # handed whole to a builder
    handed = STYLETTS_TRAIN.replace("    return device,", "    build(**config)\n    return device,")
    root = _tree(tmp_path / "whole", {"train_first.py": handed, "Configs/config.yml": STYLETTS_CONFIG})
    assert (4, "NPU019") in _codes(root, "Configs/config.yml")


# Uni-Mol's .github/workflows/docker.yml, cut down: the pushed image's name is no image the workflow runs
PUSH_WORKFLOW = """\
    name: Docker
    on: [push]
    jobs:
      build:
        runs-on: ubuntu-latest
        container:
          image: nvidia/cuda:11.3.1-devel-ubuntu20.04
        steps:
          - uses: docker/metadata-action@v5
            id: meta
            with:
              images: dptechnology/unimol-cuda11.3
              tags: |
                type=raw,value=latest-pytorch1.11.0-cuda11.3
          -
            name: Build and push with rdma
            uses: docker/build-push-action@v3
            with:
              context: ./unimol/docker/
              push: true
              build-args: |
                CUDA_VERSION=11.3.1
              tags: dptechnology/unimol:latest-pytorch1.11.0-cuda11.3
    """


def test_the_image_a_docker_action_builds_and_pushes_is_a_name():
    # the job's container image and the build's CUDA version stay; the `images:` / `tags:` names (lines 12-14, 23) go
    assert [(code, line) for code, line, _ in _audit(".github/workflows/docker.yml", PUSH_WORKFLOW)] == [
        ("NPU016", 7), ("NPU018", 22)]


def test_setup_miniconda_channels_are_read_as_conda_channels():
    workflow = """\
        name: Python test
        on: [push]
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
              - name: Create environment with mamba
                uses: conda-incubator/setup-miniconda@v3
                with:
                  mamba-version: "*"
                  # channels: pytorch, nvidia
                  channels: pytorch, nvidia, conda-forge
                  activate-environment: gfm-bench8
              - uses: conda-incubator/setup-miniconda@v2
                with:
                  channels: local,conda-forge,defaults
              - uses: conda-incubator/setup-miniconda@v3
                with:
                  channels: nvidia/label/cuda-12.1.0,conda-forge
        """
    assert _audit(".github/workflows/python-test.yml", workflow) == [
        ("NPU018", 12, "channel:nvidia"), ("NPU018", 19, "channel:nvidia")]


# Project-MONAI/model-zoo's bundle configs, cut down: `"$..."` values are Python expressions the bundle parser runs
BUNDLE = """\
    {
        "imports": ["$import glob", "$import os"],
        "device": "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')",
        "network": "$@network_def.to(@device)",
        "initialize": [
            "$dist.is_initialized() or dist.init_process_group(backend='nccl')",
            "$torch.cuda.set_device(@device)",
            "$setattr(torch.backends.cudnn, 'benchmark', True)"
        ],
        "changelog": {"0.4.4": "fix the wrong GPU index issue of multi-node"},
        "description": "$ run with torch.cuda.set_device(0) on cuda",
        "dataset_dir": "$HOME/cuda/data",
        "cuda_tag": "${{ matrix.cuda }}",
        "amp": true
    }
    """


def test_monai_bundle_expressions_are_read_as_python():
    assert _audit("configs/multi_gpu_train.json", BUNDLE) == [
        ("NPU003", 3, "cuda:0"), ("NPU002", 3, "torch.cuda.is_available"), ("NPU101", 6, "nccl"),
        ("NPU002", 7, "torch.cuda.set_device"), ("NPU006", 8, "torch.backends.cudnn.benchmark")]


def test_dollar_values_that_are_no_python_calls_are_not_read_as_code():
    # a message, a shell path and a CI expression after `$`, and a bundle expression without CUDA
    assert _audit("configs/inference.json", """\
        {
            "description": "$ run with torch.cuda.set_device(0) on cuda",
            "dataset_dir": "$HOME/cuda/data",
            "cuda_tag": "${{ matrix.cuda }}",
            "network": "$@network_def.to(@device)",
            "cudnn": "$(cudnn_version)"
        }
        """) == []


# ray-project/kuberay's config/samples/ray-service.llm-serve.yaml, cut down
RAY_SERVICE = """\
    apiVersion: ray.io/v1
    kind: RayService
    metadata:
      name: ray-serve-llm
    spec:
      serveConfigV2: |
        applications:
        - name: llms
          import_path: ray.serve.llm:build_openai_app
          args:
            llm_configs:
              - model_loading_config:
                  model_id: qwen2.5-7b-instruct
                accelerator_type: "H100"
                engine_kwargs:
                  dtype: bfloat16
                  gpu_memory_utilization: 0.92
                  max_model_len: 8192
                # accelerator_type: "A100"
      rayClusterConfig:
        headGroupSpec:
          rayStartParams:
            num-cpus: "0"
            num-gpus: "0"
        workerGroupSpecs:
        - groupName: gpu-group
          rayStartParams:
            num-gpus: "4"
    """


def test_a_rayservice_serve_config_is_read_as_a_config_and_worker_gpus_as_a_request():
    assert [(code, line) for code, line, _ in _audit("ray-service.llm-serve.yaml", RAY_SERVICE)] == [
        ("NPU028", 14), ("NPU212", 16), ("NPU028", 28)]


def test_block_strings_that_hold_no_config_stay_text():
    # a description block and a ConfigMap's script are not configs; a block that is no YAML mapping is skipped
    assert _audit("configmap.yaml", """\
        apiVersion: v1
        kind: ConfigMap
        data:
          notes.txt: |
            accelerator_type: H100 is what the cluster had
          run.yaml: |
            - just a list
          serve.yaml: |
            applications: [unclosed
        """) == []
    assert _audit("configmap.yaml", """\
        apiVersion: v1
        kind: ConfigMap
        data:
          serve.yaml: |
            llm_configs:
              - accelerator_type: "A100"
        """) == [("NPU028", 6, "llm_configs.accelerator_type: A100")]


def test_cmake_a_script_appends_to_a_cmake_file_is_read_as_cmake():
    # SevenNet's sevenn/pair_e3gnn/patch_lammps.sh, cut down
    findings = _audit("patch_lammps.sh", """\
        #!/bin/bash
        if [ "$d3_support" -ne 0 ]; then
        cp $SCRIPT_DIR/pair_d3.h $lammps_root/src/
        cat >> $lammps_root/cmake/CMakeLists.txt << "EOF"

        # find_package(CUDA) is needed for pair_d3
        find_package(CUDA)
        set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -fmad=false -O3")
        target_link_libraries(lammps PUBLIC ${CUDA_LIBRARIES} cuda)
        EOF
        fi
        cat > NOTES.md << EOF
        find_package(CUDA) and target_link_libraries(lammps PUBLIC cuda) were added
        EOF
        """)
    assert [(code, line) for code, line, _ in findings] == [
        ("NPU062", 7), ("NPU339", 8), ("NPU062", 9), ("NPU062", 9)]
