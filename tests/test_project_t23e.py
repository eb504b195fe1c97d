"""t23e (session 23, project test32): Slurm jobs written for AMD GPUs (octopack's LUMI evaluation scripts,
`#SBATCH --gpus-per-node=mi250:1`; an OLCF Frontier job's `module load rocm/6.3`) are another accelerator's files, and
IDRIS Jean Zay's GPU allocation accounts (`#SBATCH --account=cnw@a100`) are GPU requests; with controls."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(text: str, rel: str = "eval.sh") -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in ENGINE.analyze_bytes(textwrap.dedent(text).encode(), rel).findings)


LUMI_EVAL = """\
    #!/bin/bash
    #SBATCH --nodes=1
    #SBATCH --ntasks-per-node=1
    #SBATCH -p small-g
    #SBATCH -t 48:00:00
    #SBATCH --cpus-per-task=8
    #SBATCH --gpus-per-node={gpus}
    #SBATCH --exclusive=user
    #SBATCH --account=project_462000241
    #SBATCH -o logs/%j.out
    {extra}
    source /pfs/lustrep2/scratch/project_462000241/muennighoff/venv/bin/activate
    accelerate launch --config_file config_1gpus_bf16.yaml --main_process_port 25900 main.py \\
    --model starcoder \\
    --tasks humanevalfixtests-python \\
    --max_length_generation 1800 \\
    --precision bf16
    """


def test_a_slurm_job_for_amd_gpus_is_another_accelerators_file():
    assert _codes(LUMI_EVAL.format(gpus="mi250:1", extra="")) == []


def test_the_same_job_for_nvidia_gpus_keeps_its_findings():
    codes = {c for _, c in _codes(LUMI_EVAL.format(gpus="1", extra=""))}
    assert {"NPU022", "NPU212"} <= codes


def test_an_amd_job_that_also_names_the_nvidia_stack_is_read_as_usual():
    codes = {c for _, c in _codes(LUMI_EVAL.format(gpus="mi250:1", extra="export CUDA_VISIBLE_DEVICES=0"))}
    assert {"NPU004", "NPU212"} <= codes


FRONTIER = """\
    #!/usr/bin/env bash
    #SBATCH -A csc652
    #SBATCH -N 1
    module reset
    module load PrgEnv-gnu/8.6.0
    module load {module}
    module load craype-accel-amd-gfx90a
    python -m olmocr.train.train --config example_config_frontier.yaml --precision bf16
    """


def test_a_job_loading_the_rocm_module_is_another_accelerators_file():
    assert _codes(FRONTIER.format(module="rocm/6.3")) == []
    assert "NPU212" in {c for _, c in _codes(FRONTIER.format(module="cudatoolkit/12.2"))}


JEAN_ZAY = """\
    #!/bin/bash
    #SBATCH --job-name=tr13f-6B3-ml-t0
    #SBATCH --ntasks-per-node=1
    #SBATCH --cpus-per-task=64
    #SBATCH --hint=nomultithread
    #SBATCH --account={account}
    #SBATCH --output=%x-%j.out
    srun python finetune.py
    """


def test_a_jean_zay_gpu_allocation_account_is_a_gpu_request():
    assert _codes(JEAN_ZAY.format(account="cnw@a100"), "train.slurm") == [(6, "NPU022")]
    assert _codes(JEAN_ZAY.format(account="ajs@v100"), "train.slurm") == [(6, "NPU022")]


def test_a_cpu_allocation_account_and_a_plain_account_are_not():
    assert _codes(JEAN_ZAY.format(account="six@cpu"), "train.slurm") == []
    assert _codes(JEAN_ZAY.format(account="project_462000241"), "train.slurm") == []


DART_INIT = """\
    #!/usr/bin/env bash
    # Initialize conda
    __conda_setup="$("/home/${USER}/miniconda3/bin/conda" 'shell.bash' 'hook' 2>/dev/null)"
    eval "$__conda_setup"

    log() {
        local level="$1"
        shift
        echo -e "[$level] $*"
    }
    export -f log

    conda_act() {
        local env="${1:-dart-math}"
        conda activate "$env"
        log INFO "Using Python: $(which python)"
    }
    export -f conda_act

    load_cuda() {
        local ver="${1:-12.3}"
        module load "cuda-${ver}"
        log INFO "CUDA:
    $(which nvcc)
    $(nvcc --version)"
    }
    export -f load_cuda
    """

DART_JOB = """\
    #!/usr/bin/env bash
    #SBATCH --job-name=synth-onpolicy
    #SBATCH --partition=general
    #SBATCH --cpus-per-task=1
    set -eo pipefail
    {before}
    {source} utils/init.sh
    conda_act dart-math
    load_cuda 12.3

    task_id="synth-onpolicy"
    mkdir -p "logs/${{task_id}}"
    python pipeline/gen.py --gen_save_path "data/res/${{task_id}}/${{task_id}}.jsonl"
    """


def _tree_codes(tmp_path, job: str) -> list[tuple[int, str]]:
    from auditor.runner import run_static

    root = tmp_path / "tree"
    for rel, text in {"utils/init.sh": DART_INIT, "scripts/synth.sh": job}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    run = run_static([root], jobs=1)
    return sorted((f.line, f.code) for r in run.results if r.path == "scripts/synth.sh" for f in r.findings)


def test_a_call_of_a_sourced_function_that_loads_cuda(tmp_path):
    # one finding per call and category: the body's first device line (`module load "cuda-${ver}"`)
    assert _tree_codes(tmp_path, DART_JOB.format(before="", source="source")) == [(9, "NPU029")]
    # `.` sources as `source` does
    assert _tree_codes(tmp_path, DART_JOB.format(before="", source=".")) == [(9, "NPU029")]


def test_a_function_of_a_script_run_in_another_shell_or_called_before_the_source_is_not(tmp_path):
    # `bash utils/init.sh` runs it in a child shell: its functions are not defined here
    assert _tree_codes(tmp_path, DART_JOB.format(before="", source="bash")) == []
    # called before the script is sourced; and `conda_act`, whose body has no finding, never is
    job = DART_JOB.format(before="load_cuda 12.3", source="source").replace("load_cuda 12.3\n\n", "\n")
    assert _tree_codes(tmp_path, job) == []


def test_the_sourced_scripts_functions_come_from_its_one_parse(tmp_path):
    # h25a: the shell reader keeps the spans of the functions it parsed (no second, regex reading of the script); a
    # warm run takes them from the cache and gives the same findings
    from auditor.project.called_scripts import FUNCTIONS_KEY
    from auditor.runner import run_static

    summary = ENGINE.analyze_bytes(textwrap.dedent(DART_INIT).encode(), "utils/init.sh").summary
    assert summary[FUNCTIONS_KEY] == {"log": [6, 10], "conda_act": [13, 17], "load_cuda": [20, 26]}
    root = tmp_path / "tree"
    for rel, text in {"utils/init.sh": DART_INIT, "scripts/synth.sh": DART_JOB.format(before="", source="source")
                      }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    runs = [run_static([root], jobs=1, cache_dir=tmp_path / "cache") for _ in range(2)]
    found = [sorted((r.path, f.line, f.code) for r in run.results for f in r.findings) for run in runs]
    assert found[0] == found[1] and ("scripts/synth.sh", 9, "NPU029") in found[0]


def _notebook(*cells: str) -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in cells]
    return nbformat.writes(nb).encode()


def _notebook_codes(*cells: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in ENGINE.analyze_bytes(_notebook(*cells), "gen.ipynb").findings)


DART_GEN_IMPORTS = """\
    import argparse
    import os

    from vllm import LLM, SamplingParams
    """

DART_GEN_ENGINE = """\
    llm = LLM(
        model=args.model_name_or_path,
        tensor_parallel_size=args.tp,
        seed=args.inf_seed,
        trust_remote_code=True,
    )
    """


def test_a_notebook_that_starts_a_vllm_engine_in_its_kernel():
    # the engine is built in a later cell than the import: the kernel keeps the name
    assert _notebook_codes(DART_GEN_IMPORTS, DART_GEN_ENGINE) == [(5, "NPU487")]
    assert _notebook_codes("import vllm\nengine = vllm.AsyncLLMEngine.from_engine_args(engine_args)\n") == \
        [(2, "NPU487")]


def test_a_notebook_that_only_imports_vllm_or_talks_to_a_server_does_not():
    # sampling parameters alone, and an SGLang frontend client of a server launched elsewhere (SWE-Gym)
    assert _notebook_codes(DART_GEN_IMPORTS, "params = SamplingParams(temperature=0.7)\n") == []
    assert _notebook_codes("import sglang as sgl\nsgl.set_default_backend(sgl.RuntimeEndpoint('http://h:30000'))\n") \
        == []
    # a class of the notebook's own that happens to be called LLM
    assert _notebook_codes("class LLM:\n    pass\nllm = LLM()\n") == []


def test_engine_starts_are_named_by_the_python_pass_import_reading():
    # h25a: the cell's callee is named by build_context (one alias table for the rules and the notebook reader):
    # an alias of an earlier cell, a module alias, and a client of a server started elsewhere that stays quiet
    assert _notebook_codes("from vllm import LLM as Engine\n", "x = 1\n", "llm = Engine(model=path)\n") == \
        [(3, "NPU487")]
    assert _notebook_codes("import sglang as sgl\n", "engine = sgl.Engine(model_path=path)\n") == [(2, "NPU487")]
    assert _notebook_codes("import sglang as sgl\n", "backend = sgl.RuntimeEndpoint(url)\n") == []
