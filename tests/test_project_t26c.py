"""t26c (session 26, project test41): nvidia-docker held in a variable the script runs and its `NV_GPU` selection,
FAISS's GPU index turned on from a launch line (also when the flag ends its line before a click subcommand), and a
config's own boolean device option. Shaped on pymarl's `run.sh` / `src/config/default.yaml` and patchcore-inspection's
`sample_training.sh` / `sample_evaluation.sh`, each with a control."""
from __future__ import annotations


from tests.static_snippets import write_tree
# the file, then the tree passes, as the project-file bench computes them
from tests.test_project_t24b import _found


PYMARL_RUN = """\
    #!/bin/bash
    HASH=$(cat /dev/urandom | tr -dc 'a-zA-Z0-9' | fold -w 4 | head -n 1)
    GPU=$1
    name=${USER}_pymarl_GPU_${GPU}_${HASH}

    echo "Launching container named '${name}' on GPU '${GPU}'"
    # Launches a docker container using our image, and runs the provided command

    if hash nvidia-docker 2>/dev/null; then
      cmd=nvidia-docker
    else
      cmd=docker
    fi

    NV_GPU="$GPU" ${cmd} run \\
        --name $name \\
        --user $(id -u):$(id -g) \\
        -v `pwd`:/pymarl \\
        -t pymarl:1.0 \\
        ${@:2}
    """


def test_nvidia_docker_held_in_a_variable_and_its_gpu_selection(tmp_path):
    root = write_tree(tmp_path, {"run.sh": PYMARL_RUN})
    found = _found(root, "run.sh")
    # the probe (`hash nvidia-docker`) and the echo are not findings; the choice and NV_GPU are, at warning: where
    # nvidia-docker is missing the script falls back to plain docker, which ignores NV_GPU
    assert found == [(10, "NPU017", "warning"), (15, "NPU017", "warning")]


def test_unprobed_nvidia_docker_in_a_variable_is_an_error(tmp_path):
    root = write_tree(tmp_path, {"launch.sh": """\
        #!/bin/bash
        DOCKER=nvidia-docker
        $DOCKER run -it --rm -v $(pwd):/ws trainer:latest python train.py
        """})
    assert (2, "NPU017", "error") in _found(root, "launch.sh")


def test_controls_another_runtime_in_a_variable_or_a_variable_never_run(tmp_path):
    root = write_tree(tmp_path, {
        "podman.sh": PYMARL_RUN.replace("nvidia-docker", "podman").replace('NV_GPU="$GPU" ', ""),
        # a name held for a message, never run as a command
        "notes.sh": """\
            #!/bin/bash
            tool=nvidia-docker
            echo "this image also runs under ${tool}"
            docker run -t pymarl:1.0 python3 src/main.py
            """,
    })
    assert _found(root, "podman.sh") == []
    assert _found(root, "notes.sh") == []


PATCHCORE_TRAIN = """\
    datapath=/path/to/data/from/mvtec
    datasets=('bottle'  'cable'  'capsule')
    dataset_flags=($(for dataset in "${datasets[@]}"; do echo '-d '"${dataset}"; done))

    python bin/run_patchcore.py --gpu 0 --seed 0 --save_patchcore_model --log_group IM224_WR50 --log_online results \\
    patch_core -b wideresnet50 -le layer2 -le layer3 --faiss_on_gpu --pretrain_embed_dimension 1024 \\
    """ + " --anomaly_scorer_num_nn 1 --patchsize 3 sampler -p 0.1 approx_greedy_coreset dataset --resize 256" \
    + ' --imagesize 224 "${dataset_flags[@]}" mvtec $datapath\n'


PATCHCORE_EVAL = """\
    datapath=/path/to/data/from/mvtec
    loadpath=/path/to/pretrained/patchcore/model
    modelfolder=IM320_Ensemble_L2-3_P001_D1024-384_PS-3_AN-1
    savefolder=evaluated_results'/'$modelfolder

    python bin/load_and_evaluate_patchcore.py --gpu 0 --seed 0 $savefolder \\
    patch_core_loader "${model_flags[@]}" --faiss_on_gpu \\
    dataset --resize 366 --imagesize 320 "${dataset_flags[@]}" mvtec $datapath
    """


def test_faiss_gpu_launch_options(tmp_path):
    root = write_tree(tmp_path, {"sample_training.sh": PATCHCORE_TRAIN, "sample_evaluation.sh": PATCHCORE_EVAL})
    assert [f for f in _found(root, "sample_training.sh") if f[1] == "NPU415"] == [(6, "NPU415", "error")]
    # the flag ends its line; the next line's `dataset` is click's next subcommand, not the flag's value
    assert [f for f in _found(root, "sample_evaluation.sh") if f[1] == "NPU415"] == [(7, "NPU415", "error")]


def test_faiss_controls_cpu_workers_and_a_value_on_the_next_line(tmp_path):
    root = write_tree(tmp_path, {
        "cpu.sh": PATCHCORE_TRAIN.replace("--faiss_on_gpu ", "--faiss_num_workers 8 "),
        # an option whose value is written on the next line keeps it (`false` is a value, not a subcommand)
        "off.sh": """\
            python eval_knn.py --use_faiss_gpu \\
                false --k 20
            """,
    })
    assert [f for f in _found(root, "cpu.sh") if f[1] == "NPU415"] == []
    assert [f for f in _found(root, "off.sh") if f[1] == "NPU415"] == []


def test_an_option_and_value_split_over_a_line_break_keep_their_meaning(tmp_path):
    root = write_tree(tmp_path, {"serve.sh": """\
        #!/bin/bash
        docker run --rm --runtime \\
            nvidia trainer:latest python train.py
        """})
    assert (2, "NPU017", "error") in _found(root, "serve.sh")


PYMARL_DEFAULT = """\
    # --- pymarl options ---
    runner: "episode" # Runs 1 env for an episode
    mac: "basic_mac" # Basic controller
    env: "sc2" # Environment name
    t_max: 10000 # Stop running after this many timesteps
    use_cuda: True # Use gpu by default unless it isn't available
    buffer_cpu_only: True # If true we won't keep all of the replay buffer in vram
    """

PYMARL_RUN_PY = """\
    def run(_run, _config, _log):
        args = SN(**_config)
        args.device = "cuda" if args.use_cuda else "cpu"
    """


def test_a_configs_own_boolean_device_option_is_not_a_device_choice(tmp_path):
    root = write_tree(tmp_path, {"src/config/default.yaml": PYMARL_DEFAULT, "src/run.py": PYMARL_RUN_PY})
    assert _found(root, "src/config/default.yaml") == []


def test_device_value_and_profiler_switch_stay(tmp_path):
    root = write_tree(tmp_path, {
        "src/config/default.yaml": PYMARL_DEFAULT.replace("use_cuda: True", "device: cuda"),
        "recipe.yaml": """\
            profiler:
              _component_: torchtune.training.setup_torch_profiler
              enabled: True
              cuda: True
            """,
    })
    assert [c for _, c, _ in _found(root, "src/config/default.yaml")] == ["NPU019"]
    assert [c for _, c, _ in _found(root, "recipe.yaml")] == ["NPU019"]
