"""t15n (issue 15, tuned on project test12): launch lines of attention wrappers and of entry points that choose a
CUDA-only attention, found where the launched path is read from a sub-project's folder, from a renamed package,
or where the entry point's `__main__` block makes the choice itself."""
from __future__ import annotations

import textwrap
from pathlib import Path

from tests.static_snippets import write_tree

_PATCH = textwrap.dedent("""\
    import torch
    import transformers
    from einops import rearrange
    from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func
    from flash_attn.bert_padding import unpad_input, pad_input


    def forward(self, hidden_states, attention_mask=None, position_ids=None, **kwargs):
        bsz, q_len, _ = hidden_states.size()
        qkv = torch.stack([self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)], dim=2)
        x_unpad, indices, cu_q_lens, max_s = unpad_input(rearrange(qkv, "b s three h d -> b s (three h d)"),
                                                         attention_mask)
        out = flash_attn_varlen_qkvpacked_func(x_unpad, cu_q_lens, max_s, 0.0, softmax_scale=None, causal=True)
        return pad_input(out, indices, bsz, q_len), None, None


    def replace_llama_attn_with_flash_attn():
        transformers.models.llama.modeling_llama.LlamaAttention.forward = forward
    """)

_WRAPPER = textwrap.dedent("""\
    # Make it more memory efficient by monkey patching the LLaMA model with FlashAttn.

    # Need to call this before importing transformers.
    from {pkg}.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

    replace_llama_attn_with_flash_attn()

    from {pkg}.train.train import train

    if __name__ == "__main__":
        train()
    """)

_TRAIN = textwrap.dedent("""\
    import transformers


    def train():
        parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
        (training_args,) = parser.parse_args_into_dataclasses()
        return training_args
    """)

_FINETUNE = textwrap.dedent("""\
    #!/bin/bash
    LOAD='MAGAer13/mplug-owl2-llama2-7b'

    DATA_FILE=./playground/data/llava_v1_5_mix665k.json
    deepspeed {path} \\
        --deepspeed ./scripts/zero3.json \\
        --model_name_or_path $LOAD \\
        --data_path $DATA_FILE \\
        --bf16 True \\
        --output_dir ./checkpoints/finetune
    """)


def _findings(tmp_path: Path, files: dict[str, str]):
    from auditor.runner import run_static

    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return [(r.path, f) for r in run.results for f in r.findings]


def test_a_sub_project_script_launching_its_wrapper_from_the_sub_project_folder(tmp_path):
    # the tree holds two sub-projects; the script sits in owl2/scripts/ and is run from owl2/
    files = {
        "owl2/owl2pkg/train/llama_flash_attn_monkey_patch.py": _PATCH,
        "owl2/owl2pkg/train/train_mem.py": _WRAPPER.format(pkg="owl2pkg"),
        "owl2/owl2pkg/train/train.py": _TRAIN,
        "owl2/scripts/finetune.sh": _FINETUNE.format(path="owl2pkg/train/train_mem.py"),
        "owl3/scripts/finetune.sh": _FINETUNE.format(path="owl3pkg/train/train_mem.py"),
    }
    got = _findings(tmp_path, files)
    launches = [(path, f.line) for path, f in got if f.code == "NPU312"]
    assert launches == [("owl2/scripts/finetune.sh", 5)], launches
    f = next(f for path, f in got if f.code == "NPU312")
    assert "llama_flash_attn_monkey_patch" in f.message and f.severity == "info"


def test_a_stale_launch_path_of_a_renamed_package_is_read_from_the_one_same_path_file(tmp_path):
    # a fork renamed llava/ to moellava/ and kept the launch scripts it copied
    files = {
        "moellava/train/llama_flash_attn_monkey_patch.py": _PATCH,
        "moellava/train/train_mem.py": _WRAPPER.format(pkg="moellava"),
        "moellava/train/train.py": _TRAIN,
        "scripts/finetune.sh": _FINETUNE.format(path="llava/train/train_mem.py"),
    }
    got = _findings(tmp_path, files)
    found = [f for path, f in got if f.code == "NPU312"]
    assert [f.line for f in found] == [5], got
    assert "absent from the tree; read as `moellava/train/train_mem.py`" in found[0].message
    # two candidates with the same path: which one the script meant is unknown, nothing is reported
    files["moellava2/train/train_mem.py"] = _WRAPPER.format(pkg="moellava")
    other = tmp_path.parent / (tmp_path.name + "-two")
    got = _findings(other, files)
    assert not [f for path, f in got if f.code == "NPU312"], got


def test_an_entry_point_whose_main_block_chooses_flash_attention_is_reported_on_its_launch(tmp_path):
    train = textwrap.dedent("""\
        import transformers
        from transformers import AutoModelForCausalLM


        def train(attn_implementation=None):
            parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
            (training_args,) = parser.parse_args_into_dataclasses()
            model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-7B-Instruct",
                                                         attn_implementation=attn_implementation)
            transformers.Trainer(model=model, args=training_args).train()


        if __name__ == "__main__":
            train("flash_attention_2")
        """)
    opt_in = train.replace('    train("flash_attention_2")',
                           '    import sys\n    if "--flash" in sys.argv:\n        train("flash_attention_2")')
    script = textwrap.dedent("""\
        torchrun --nnodes $WORLD_SIZE \\
            --nproc_per_node $NPROC_PER_NODE \\
            --master_port=$MASTER_PORT \\
            vlm/train.py \\
            --deepspeed scripts/zero3.json \\
            --bf16 True
        torchrun --nproc_per_node 8 vlm/train_opt_in.py --bf16 True
        """)
    got = _findings(tmp_path, {"vlm/train.py": train, "vlm/train_opt_in.py": opt_in, "scripts/ft.sh": script})
    launches = [(path, f.line, f.col) for path, f in got if f.code == "NPU354"]
    assert launches == [("scripts/ft.sh", 4, 5)], launches
    f = next(f for path, f in got if f.code == "NPU354")
    assert "vlm/train.py:14" in f.message and f.category == "attention"


def test_a_ci_step_printing_build_facts_is_a_report_and_a_probe_that_decides_is_not():
    from auditor.project.shell import analyze_shell
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    script = textwrap.dedent("""\
        #!/bin/bash
        set -ex
        nvcc --version
        python --version
        python -c "import torch; print('PyTorch:', torch.__version__)"
        python -c "import torch; print('CUDA:', torch.version.cuda)"
        python -c "from torch.utils import cpp_extension; print (cpp_extension.CUDA_HOME)"
        python -c 'import torch; print("CUDA:", torch.cuda.is_available())'
        export TORCH_CUDA_VERSION=$(python -c "import torch; print(torch.version.cuda.replace('.', ''))")
        if [ "$(python -c 'import torch; print(torch.version.cuda)')" = "12.1" ]; then
            pip install flash-attn --no-build-isolation
        fi
        """)
    engine = StaticEngine(load_rules())
    lines = sorted({f.line for f in analyze_shell(engine, script.encode(), "ci/build.sh").findings})
    # 3: nvcc; 8: a runtime query (is_available) stays; 9: the version read into a variable that the build uses;
    # 10-11: a test on the probe and the branch it gates. 6 and 7 only print to the log.
    assert 6 not in lines and 7 not in lines, lines
    assert {3, 8, 9, 11} <= set(lines), lines


def _shell_lines(script: str, rel: str = "scripts/run.sh") -> dict[int, set[str]]:
    from auditor.project.shell import analyze_shell
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    out: dict[int, set[str]] = {}
    for f in analyze_shell(StaticEngine(load_rules()), script.encode(), rel).findings:
        out.setdefault(f.line, set()).add(f.code)
    return out


def test_a_torch_install_from_the_cpu_wheel_index_is_not_the_cuda_build():
    script = textwrap.dedent("""\
        pip install ninja packaging setuptools wheel twine
        # We don't want to download anything CUDA-related here
        pip install torch --index-url https://download.pytorch.org/whl/cpu
        pip install torch==2.3.1
        pip install torch --index-url https://download.pytorch.org/whl/cu121
        """)
    got = _shell_lines(script)
    assert 3 not in got, got
    assert "NPU011" in got.get(4, set()), got       # a plain torch pin: still the torch_npu pairing note
    assert 5 in got, got                             # the CUDA wheel index


def test_an_option_string_in_a_variable_the_launch_never_reads_is_not_a_setting():
    script = textwrap.dedent("""\
        #!/bin/bash
        gpu_model=$(nvidia-smi --query-gpu=gpu_name --format=csv,noheader | head -n 1)
        if [[ $gpu_model == *"A100"* ]]; then
            DTYPE="--bf16"
        else
            DTYPE="--fp16"
        fi
        PREC="--bf16"
        torchrun --nproc_per_node 8 eval.py --model_path ./ckpt $PREC
        CMAKE_ARGS="-DCMAKE_POLICY_VERSION_MINIMUM=3.5" pip install nvidia-cudnn-frontend
        """)
    got = _shell_lines(script)
    assert 4 not in got, got                 # DTYPE is never read
    assert "NPU212" in got.get(8, set()), got        # PREC is passed to the launch
    assert 10 in got, got                            # a prefix of a command is not a variable of the script
    sourced = script.replace("torchrun --nproc_per_node 8 eval.py --model_path ./ckpt $PREC\n", "").replace(
        'CMAKE_ARGS="-DCMAKE_POLICY_VERSION_MINIMUM=3.5" pip install nvidia-cudnn-frontend\n', "")
    assert 4 in _shell_lines(sourced, "scripts/env.sh"), "a settings file others source keeps its values"


def test_a_pip_freeze_names_its_editable_cuda_projects():
    from auditor.project.requirements import analyze_requirements_txt
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    freeze = textwrap.dedent("""\
        einops==0.8.0
        exceptiongroup==1.2.1
        -e git+https://github.com/sustcsonglin/flash-linear-attention@36743f3f14e47f23c1ad45cf5de727dbacb5600e#egg=fla
        fonttools==4.53.0
        -e git+https://github.com/psf/black@24.4.2#egg=black_fork
        # Editable install with no version control (mamba-ssm==1.0.1)
        -e /mnt/data/envs/det2/lib/python3.9/site-packages
        # Editable install with no version control (mylib==0.1.0)
        -e /home/me/mylib
        Markdown==3.6
        """)
    found = analyze_requirements_txt(StaticEngine(load_rules()), freeze.encode(), "det-requirements.txt").findings
    by_line = {f.line: f for f in found}
    assert by_line[3].category == "kernel" and "flash-linear-attention" in by_line[3].symbol, by_line
    assert 5 not in by_line and 9 not in by_line, by_line          # neither names a CUDA project
    assert 7 in by_line and by_line[7].symbol == "mamba-ssm", by_line


def test_a_forced_cuda_build_of_a_cloned_tree_in_a_dockerfile():
    from auditor.project.dockerfile import analyze_dockerfile
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    docker = textwrap.dedent("""\
        FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04
        RUN pip install --user 'git+https://github.com/facebookresearch/fvcore'
        # install detectron2
        RUN git clone https://github.com/facebookresearch/detectron2 detectron2_repo
        # set FORCE_CUDA because during `docker build` cuda is not accessible
        ENV FORCE_CUDA="1"
        ARG TORCH_CUDA_ARCH_LIST="Kepler;Kepler+Tesla;Maxwell;Maxwell+Tegra;Pascal;Volta;Turing"
        ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"

        RUN pip install --user -e detectron2_repo
        RUN git clone https://github.com/open-mmlab/mmaction2.git /mmaction2
        WORKDIR /mmaction2
        RUN pip install --no-cache-dir -e .
        """)
    engine = StaticEngine(load_rules())
    found = [f for f in analyze_dockerfile(engine, docker.encode(), "docker/Dockerfile").findings
             if f.code == "NPU355"]
    assert [(f.line, f.severity) for f in found] == [(10, "error")], found
    off = docker.replace('ENV FORCE_CUDA="1"', 'ENV FORCE_CUDA="0"')
    assert not [f for f in analyze_dockerfile(engine, off.encode(), "docker/Dockerfile").findings
                if f.code == "NPU355"]
