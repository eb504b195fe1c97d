"""Which plain assignments of a script reach a program (h24b, session 24): the exported and read names are read
from the tree-sitter-bash parse (shell._environment_names), each case on a script shaped like the real one."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_export_inside_a_block_reaches_the_launch(engine):
    # multi-node launchers: `NCCL_IB_DISABLE=1` set at the top, exported inside an `if` (indented)
    src = """\
        NCCL_IB_DISABLE=1
        NCCL_DEBUG=INFO
        if [ "$NNODES" -gt 1 ]; then
            export NCCL_IB_DISABLE
        fi
        torchrun --nnodes $NNODES train.py
        """
    found = codes_by_line(engine, src, "scripts/train.sh")
    assert found.get(line_of(src, "NCCL_IB_DISABLE=1"))
    assert not found.get(line_of(src, "NCCL_DEBUG=INFO"))


def test_reads_tree_sitter_splits_or_leaves_in_patterns(engine):
    # Megatron-LLM's examples/sc21/SRUN.sh: `--output=${THIS_DIR}/logs/%x_%j_$DATETIME.log` (the parser splits the
    # word after the second `$`); OpenCodeInterpreter's eval script: `[[ $jsonl_file != *$pattern* ]]`
    src = """\
        NCCL_DEBUG=INFO
        NCCL_IB_HCA=mlx5
        srun --output=${THIS_DIR}/logs/%x_%j_$NCCL_DEBUG.log sh -c "${CMD}"
        if [[ $jsonl_file != *$NCCL_IB_HCA* ]]; then
            echo skip
        fi
        """
    found = codes_by_line(engine, src, "examples/SRUN.sh")
    assert found.get(line_of(src, "NCCL_DEBUG=INFO"))
    assert found.get(line_of(src, "NCCL_IB_HCA=mlx5"))


def test_a_read_in_a_comment_reads_nothing(engine):
    # LLM-Shearing's scripts/pruning.sh: the launch line that read the variable is commented out
    src = """\
        NCCL_DEBUG=INFO
        # composer $TRAIN_SCRIPT --nccl-debug $NCCL_DEBUG \\
        composer train.py
        """
    assert not codes_by_line(engine, src, "scripts/pruning.sh").get(line_of(src, "NCCL_DEBUG=INFO"))


@pytest.mark.parametrize("switch", ["set -ea", "set -e -a", "set -o allexport"])
def test_allexport_in_any_spelling(engine, switch):
    src = f"{switch}\nNCCL_DEBUG=INFO\npython train.py\n"
    assert codes_by_line(engine, src, "train.sh").get(line_of(src, "NCCL_DEBUG=INFO"))
