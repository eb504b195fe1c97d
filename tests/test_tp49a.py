"""tp49a (session 49, project test136 / test137): families the project-file readers missed on session 48's blind project
splits (autonomous driving, weather, RLHF, Gaussian splatting; molecular ML, federated learning, music, multimodal
LLMs). Recall: accelerate's `dynamo_backend: CUDAGRAPHS` (NPU960), dpdispatcher / DP-GEN machine files (GPU requests,
GPU queues and machine types: NPU028; `if_cuda_multi_devices`: NPU961; a CUDA toolkit outside /usr/local: NPU027),
cargo's `cuda` feature, also through a CI matrix value (NPU962), Jean Zay's `#SBATCH -A abc@v100`, Isaac Gym's device
keys read by the imported framework, torch's `+cuNNN` label (NPU963), held apt package lists with computed parts,
launches of FastChat / LLaVA's `train_mem.py` in a tree without it. Quiet: a local (`shell`) dpdispatcher job's counts,
a CI matrix leg's name (`device: [cpu, gpu]`), JSON named for a machine without dpdispatcher's schema, comments,
messages and CPU values. Shaped on ReST-MCTS, DP-GEN, MusicGPT, hierarchical-3d-gaussians, openrl, neural-lam, plato
and LLaVA-pp; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree


ACCELERATE_CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
downcast_bf16: 'no'
dynamo_config:
  dynamo_backend: CUDAGRAPHS
  dynamo_mode: default
# dynamo_backend: CUDAGRAPHS
num_processes: 8
"""

ACCELERATE_INDUCTOR = """\
distributed_type: MULTI_GPU
dynamo_backend: INDUCTOR
num_processes: 8
"""


def test_accelerate_cudagraphs_backend(tmp_path):
    found = audit_file(tmp_path, "self_train/config/default_config.yaml", ACCELERATE_CONFIG)
    assert codes_of_line(found, 5) == {"NPU960"}
    # the backend skips a non-CUDA graph and runs it uncaptured (torch/_dynamo/backends/cudagraphs.py): slower
    assert [sev for line, code, sev in found if code == "NPU960"] == ["warning"]
    for line in (3, 6, 7):                        # a TPU-only switch, the mode, a comment
        assert not codes_of_line(found, line), line
    inductor = audit_file(tmp_path / "b", "configs/accelerate.yaml", ACCELERATE_INDUCTOR)
    assert not codes_of_line(inductor, 2)            # (line 1's MULTI_GPU is NPU124's)
    launch = audit_file(tmp_path / "c", "run.sh", "#!/bin/bash\naccelerate launch --dynamo_backend cudagraphs "
                                                  "train.py\necho '--dynamo_backend cudagraphs is slow'\n")
    assert "NPU960" in codes_of_line(launch, 2)
    assert not codes_of_line(launch, 3)


DPGEN_MACHINE = """\
{
    "api_version": "1.0",
    "train": [
        {
            "command": "dp",
            "machine": {
                "batch_type": "PBS",
                "context_type": "SSHContext",
                "local_root": "./",
                "remote_root": "/home/user/work"
            },
            "resources": {
                "envs": {
                    "LD_LIBRARY_PATH": "/opt/software/cuda/10.1/lib64:$LD_LIBRARY_PATH"
                },
                "number_node": 1,
                "cpu_per_node": 4,
                "gpu_per_node": 1,
                "queue_name": "T4_4_15",
                "group_size": 1,
                "strategy": {
                    "if_cuda_multi_devices": true
                }
            }
        }
    ],
    "fp": [
        {
            "command": "vasp_std",
            "machine": {"batch_type": "PBS", "context_type": "SSHContext", "local_root": "./"},
            "resources": {
                "number_node": 1,
                "cpu_per_node": 32,
                "gpu_per_node": 0,
                "queue_name": "G_32_128",
                "group_size": 5
            }
        }
    ]
}
"""


def test_dpdispatcher_machine_file(tmp_path):
    found = audit_file(tmp_path, "examples/run/methane/machine.json", DPGEN_MACHINE)
    assert codes_of_line(found, 14) == {"NPU027"}      # the CUDA toolkit on the job's library path
    assert codes_of_line(found, 18) == {"NPU028"}      # GPUs per node under PBS
    assert codes_of_line(found, 19) == {"NPU028"}      # a queue named for NVIDIA T4 nodes
    assert codes_of_line(found, 22) == {"NPU961"}      # one CUDA device per task
    for line in (16, 17, 34, 35):                      # node / CPU counts, no GPUs, a CPU queue
        assert not codes_of_line(found, line), line


LEBESGUE_MACHINE = """\
{
  "train": {
    "machine": {
      "batch_type": "DpCloudServer",
      "context_type": "DpCloudServerContext",
      "remote_profile": {
        "input_data": {
          "job_type": "indicate",
          "scass_type": "c8_m60_1 * NVIDIA P100",
          "platform": "ali"
        }
      }
    },
    "resources": {"number_node": 1, "cpu_per_node": 4, "gpu_per_node": 1, "queue_name": "GPU", "group_size": 1}
  },
  "fp": {
    "machine": {"batch_type": "DpCloudServer", "context_type": "DpCloudServerContext",
                "remote_profile": {"input_data": {"scass_type": "c8_m8_cpu"}}},
    "resources": {"number_node": 1, "cpu_per_node": 8, "gpu_per_node": 0, "queue_name": "CPU", "group_size": 1}
  }
}
"""


def test_cloud_machine_types_and_local_jobs(tmp_path):
    found = audit_file(tmp_path, "examples/machine/lebesgue_v2_machine.json", LEBESGUE_MACHINE)
    assert codes_of_line(found, 9) == {"NPU028"}       # an NVIDIA P100 machine type
    assert codes_of_line(found, 14) == {"NPU028"}      # gpu_per_node and the GPU queue, one line
    assert not codes_of_line(found, 18) and not codes_of_line(found, 19)     # a CPU machine, no GPUs, a CPU queue
    local = DPGEN_MACHINE.replace('"batch_type": "PBS"', '"batch_type": "shell"')
    found = audit_file(tmp_path / "local", "machine-local.json", local)
    # a job started on the machine itself asks no scheduler: its counts are counts (decision 26)
    assert not codes_of_line(found, 18) and not codes_of_line(found, 19)
    assert codes_of_line(found, 22) == {"NPU961"}


CPU_QUEUES_MACHINE = """\
{
  "machine": {"batch_type": "Slurm", "context_type": "LocalContext", "local_root": "./", "remote_root": "/work"},
  "resources": {"number_node": 1, "cpu_per_node": 40, "gpu_per_node": 0, "queue_name": "small40", "group_size": 1},
  "post_fp": {"resources": {"number_node": 2, "cpu_per_node": 40, "queue_name": "parallel40", "group_size": 1}},
  "model_devi": {"resources": {"number_node": 1, "cpu_per_node": 80, "queue_name": "bulk80", "group_size": 8}},
  "train": {"resources": {"number_node": 1, "cpu_per_node": 8, "gpu_per_node": 1, "queue_name": "gpu_l40s",
                          "group_size": 1}},
  "fp": {"resources": {"number_node": 1, "cpu_per_node": 8, "queue_name": "V100_8", "group_size": 1}}
}
"""


def test_cpu_queue_names_with_digits_ask_for_no_gpu(tmp_path):
    """review49 item 9: a card name inside a CPU queue's name (`small40` holds `l40`, `bulk80` holds `k80`) is no
    GPU request, nor is the queue of a job asking for `gpu_per_node: 0`; a card name after a separator or at the
    start of the name still is."""
    found = audit_file(tmp_path, "machine.json", CPU_QUEUES_MACHINE)
    for line in (3, 4, 5):
        assert "NPU028" not in codes_of_line(found, line), line
    assert "NPU028" in codes_of_line(found, 6)         # gpu_per_node: 1 and a GPU queue, one line
    assert "NPU028" in codes_of_line(found, 8)         # a V100 queue
    # a queue named for a card keeps its finding beside `gpu_per_node: 0` (GPUs asked through custom_flags)
    found = audit_file(tmp_path / "b", "machine.json", CPU_QUEUES_MACHINE.replace('"small40"', '"gpu_v100"'))
    assert "NPU028" in codes_of_line(found, 3)


def test_machine_named_json_without_the_schema_is_data(tmp_path):
    data = '{\n  "machine": "x86_64",\n  "device": "cuda:0",\n  "gpu_per_node": 1\n}\n'
    assert not audit_file(tmp_path, "results/machine.json", data)


def test_machine_named_json_that_does_not_parse_is_data():
    # JSON with comments and a trailing comma, as editors write it: named for a machine, not a broken config
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    data = b'{\n  // the UI states\n  "states": ["idle", "run"],\n}\n'
    result = StaticEngine(load_rules()).analyze_bytes(data, "ui/state_machine.json")
    assert result.error is None and not result.findings


def test_cuda_toolkit_installed_elsewhere(tmp_path):
    found = audit_file(tmp_path, "env.sh", "#!/bin/bash\n"
                       "export LD_LIBRARY_PATH=/opt/software/cuda/10.1/lib64:$LD_LIBRARY_PATH\n"
                       "export PATH=/opt/cuda-11.8/bin:$PATH\n"
                       "# export PATH=/opt/cuda/bin:$PATH\n"
                       "ls csrc/cuda/include\n"
                       "export CPATH=/opt/intel/oneapi/mkl/include\n")
    assert codes_of_line(found, 2) == {"NPU027"}
    assert codes_of_line(found, 3) == {"NPU027"}
    for line in (4, 5, 6):                             # a comment, the project's own sources, another library
        assert not codes_of_line(found, line), line


MUSICGPT_DOCKERFILE = """\
FROM rust:1.80 as builder
WORKDIR /usr/src/musicgpt
COPY Cargo.toml Cargo.lock ./
RUN cargo build --features cuda --release
RUN cargo build --release -F "candle-core/cuda,cudnn"
RUN cargo build --release --features coreml
# RUN cargo build --features cuda --release
RUN echo "cargo build --features cuda builds the GPU binary"
"""

MUSICGPT_CI = """\
name: CI
on: [push]
jobs:
  upload:
    strategy:
      matrix:
        include:
          - os: ubuntu-latest
            target: x86_64-unknown-linux-gnu
            features: cuda
          - os: macos-latest
            target: aarch64-apple-darwin
            features: coreml
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - run: cargo build --release --target ${{ matrix.target }} --features ${{ matrix.features }}
"""


def test_cargo_cuda_features(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", MUSICGPT_DOCKERFILE)
    assert codes_of_line(found, 4) == {"NPU962"}
    assert codes_of_line(found, 5) == {"NPU962"}       # a dependency's feature in a list
    for line in (6, 7, 8):                             # CoreML, a comment, a message
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "ci", ".github/workflows/ci.yml", MUSICGPT_CI)
    assert codes_of_line(found, 10) == {"NPU962"}      # the matrix value the step's `--features` reads
    for line in (9, 13, 17):                           # a target, Apple's feature, the step itself
        assert not codes_of_line(found, line), line


NEURAL_LAM_CI = """\
name: CPU+GPU testing
on: [push]
jobs:
  tests:
    runs-on: ${{ matrix.runner }}
    strategy:
      matrix:
        device: [cpu, gpu]
        include:
          - device: cpu
            runner: ubuntu-latest
          - device: gpu
            runner: gpu-runner
    steps:
      - name: Check torch variant is cu130
        if: matrix.device == 'gpu'
        run: |
          python -c "import torch; assert torch.__version__.endswith('+cu130')"
      - name: Check torch variant is cpu
        run: |
          python -c "import torch; assert torch.__version__.endswith('+cpu')"
"""


def test_matrix_leg_names_and_cuda_build_label(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/install-and-test.yml", NEURAL_LAM_CI)
    for line in (8, 12):                               # the legs' names: their runner and steps choose
        assert "NPU019" not in codes_of_line(found, line), line
    assert codes_of_line(found, 13) == {"NPU028"}      # the GPU runner
    assert codes_of_line(found, 18) == {"NPU963"}      # the CUDA build's label asserted
    assert not codes_of_line(found, 21) and not codes_of_line(found, 15)


def test_torch_cuda_build_label_in_python(tmp_path):
    found = audit_file(tmp_path, "tools/check_env.py", "import torch\n"
                       "if '+cu121' not in torch.__version__:\n"
                       "    raise SystemExit('install the cu121 wheel')\n"
                       "local = torch.__version__.split('+cu')[-1]\n"
                       "# torch 2.1.0+cu121 was used\n")
    assert codes_of_line(found, 2) == {"NPU963"}
    for line in (3, 4, 5):                             # a message, a split, a comment
        assert not codes_of_line(found, line), line


JEAN_ZAY_JOB = """\
#!/bin/bash
#SBATCH -A hzb@v100
#SBATCH -A hzb@a100
#SBATCH -A hzb@cpu
#SBATCH -A project_465000000
#SBATCH -C v100-32g
python train.py
"""


def test_jean_zay_gpu_accounts(tmp_path):
    found = audit_file(tmp_path, "scripts/train_chunk.slurm", JEAN_ZAY_JOB)
    # V100 and A100 hours; CPU hours and a plain project account ask for no GPU; `-C v100-32g` was read before
    assert [codes_of_line(found, line) for line in (2, 3, 4, 5, 6)] == [{"NPU022"}, {"NPU022"}, set(), set(), {"NPU022"}]
    submit = audit_file(tmp_path / "s", "submit.sh", "#!/bin/bash\nsbatch -A abc@h100 job.slurm\n"
                                                     "sbatch -A abc@cpu prep.slurm\n")
    assert codes_of_line(submit, 2) == {"NPU022"}
    assert not codes_of_line(submit, 3)


ISAAC_CONFIG = """\
task_name: ${task.name}
num_envs: ''
# whether to use cpu or gpu pipeline
pipeline: 'gpu'
sim_device: 'gpu'
device_id: 0
rl_device: 'cuda:0'
multi_gpu: False
enable_livestream: False
"""

ISAAC_TRAIN = """\
import hydra
from omniisaacgymenvs.envs.vec_env_rlgames import VecEnvRLGames
from omniisaacgymenvs.utils.task_util import initialize_task
from omniisaacgymenvs.utils.hydra_cfg.reformat import omegaconf_to_dict


@hydra.main(config_name="config", config_path="cfg")
def main(cfg):
    cfg.num_envs = 9
    env = VecEnvRLGames(headless=True, sim_device=cfg.device_id, enable_livestream=cfg.enable_livestream)
    initialize_task(omegaconf_to_dict(cfg), env)
"""

OWN_SIM_TRAIN = ISAAC_TRAIN.replace("omniisaacgymenvs.envs.vec_env_rlgames", "mysim.envs").replace(
    "omniisaacgymenvs.utils.task_util", "mysim.tasks").replace("omniisaacgymenvs.utils.hydra_cfg.reformat", "mysim.util")


def test_isaac_gym_device_keys(tmp_path):
    root = write_tree(tmp_path, {"examples/isaac/cfg/config.yaml": ISAAC_CONFIG,
                                 "examples/isaac/train_ppo.py": ISAAC_TRAIN})
    found = tree_findings(root, "examples/isaac/cfg/config.yaml")
    for line in (4, 5, 7):                             # the framework reads them from the config handed to it
        assert codes_of_line(found, line) == {"NPU019"}, line
    assert not codes_of_line(found, 3) and not codes_of_line(found, 8)
    # a tree that builds its own simulator from the same keys reads them itself (t25b: unread keys stay quiet)
    root = write_tree(tmp_path / "own", {"cfg/config.yaml": ISAAC_CONFIG, "train.py": OWN_SIM_TRAIN})
    assert not codes_of_line(tree_findings(root, "cfg/config.yaml"), 5)


HELD_CUDA_PACKAGES = """\
#!/bin/bash
CUDA_VERSION_MAJOR_MINOR=${cuda}
CUDA_MAJOR=$(echo "${CUDA_VERSION_MAJOR_MINOR}" | cut -d. -f1)
CUDA_MINOR=$(echo "${CUDA_VERSION_MAJOR_MINOR}" | cut -d. -f2)
PACKAGES=""
for package in command-line-tools libraries-dev; do
    PACKAGES+=" cuda-${package}-${CUDA_MAJOR}-${CUDA_MINOR}"
done
echo "Installing CUDA packages ${PACKAGES}"
$USE_SUDO apt-get -y install ${PACKAGES}
TOOLS="git curl"
$USE_SUDO apt-get -y install ${TOOLS}
"""


def test_held_apt_packages_with_computed_parts(tmp_path):
    found = audit_file(tmp_path, "scripts/actions/install_cuda_ubuntu.sh", HELD_CUDA_PACKAGES)
    assert codes_of_line(found, 10) == {"NPU018"}
    assert not codes_of_line(found, 9) and not codes_of_line(found, 12)     # a message, plain tools


LLAVA_PP_SCRIPT = """\
#!/bin/bash

deepspeed llava/train/train_mem.py \\
    --deepspeed ./scripts/zero2.json \\
    --model_name_or_path microsoft/Phi-3-mini-4k-instruct \\
    --output_dir ./checkpoints/llava-phi3
deepspeed llava/train/train.py \\
    --deepspeed ./scripts/zero2.json
"""


def test_absent_upstream_attention_wrapper(tmp_path):
    # LLaVA-pp's scripts run in LLaVA's checkout: the tree holds only its patched model files
    root = write_tree(tmp_path, {"scripts/Phi3-V_pretrain.sh": LLAVA_PP_SCRIPT,
                                 "Phi-3-V/train.py": "def train(attn_implementation=None):\n    pass\n"})
    found = tree_findings(root, "scripts/Phi3-V_pretrain.sh")
    assert codes_of_line(found, 3) == {"NPU312"}
    assert not codes_of_line(found, 7)                 # the plain entry point
    # a tree with its own train_mem.py decides by that file (a plain wrapper: nothing to report)
    root = write_tree(tmp_path / "own", {"scripts/pretrain.sh": LLAVA_PP_SCRIPT,
                                         "llava/train/train_mem.py": "from llava.train.train import train\n\n"
                                                                     "if __name__ == '__main__':\n    train()\n",
                                         "llava/train/train.py": "def train():\n    pass\n"})
    assert not codes_of_line(tree_findings(root, "scripts/pretrain.sh"), 3)


MATRIX_DEVICE_WORKFLOW = """\
name: tests
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        device: [cpu, cuda]
    steps:
      - uses: actions/checkout@v4
      - run: python -m pytest tests --device ${{ matrix.device }}
"""


def test_matrix_leg_handed_to_a_device_option(tmp_path):
    """review49 item 8: a leg's name alone chooses nothing (tp49a), but a leg a step passes to `--device` is that
    option's device: the CUDA leg stays reported (no other line of the workflow names CUDA)."""
    found = audit_file(tmp_path, ".github/workflows/test.yml", MATRIX_DEVICE_WORKFLOW)
    assert "NPU019" in codes_of_line(found, 8)
    quiet = MATRIX_DEVICE_WORKFLOW.replace(" --device ${{ matrix.device }}", "")
    found = audit_file(tmp_path / "b", ".github/workflows/test.yml", quiet)
    assert not codes_of_line(found, 8)
