"""tp60b (session 60, issue 15): project-file lines labelled `none` that the tool flagged, read by their construct: a
notebook's boolean CUDA switch whose every read gates calls reported on their own (lead decisions 25 and 47), and a
CUDA macro on a continued line of an nvcc command whose own line is reported (decisions 18 and 66)."""
from __future__ import annotations

import json

from tests.static_snippets import audit_file, codes_of_line, tree_codes_by_line, write_tree


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 4})


# an object-detection tutorial: the switch in the set-up cell, the CUDA moves under `if use_cuda:` in later cells
SETUP_CELL = """\
import torch
from backbone import DetBackbone

compound_coef = 0
use_cuda = True
threshold = 0.2
"""
INFER_CELL = """\
x = torch.stack([torch.from_numpy(fi) for fi in framed_imgs], 0)
if use_cuda:
    x = x.cuda()
model = DetBackbone(compound_coef=compound_coef)
if use_cuda:
    model = model.cuda()
"""


def test_a_notebook_switch_that_only_gates_reported_calls_is_quiet(tmp_path):
    root = write_tree(tmp_path / "det", {"tutorial/train.ipynb": _notebook(SETUP_CELL, INFER_CELL)})
    found = tree_codes_by_line(root, "tutorial/train.ipynb")
    assert not found.get(5)                       # `use_cuda = True`: decision 25 / 47, the gated calls are the pairs
    assert "NPU001" in found.get(9, set()) and "NPU001" in found.get(12, set())


def test_a_notebook_switch_passed_on_keeps_its_finding(tmp_path):
    """`Model(use_cuda=use_cuda)`: the switch reaches code the notebook does not show; its line stays reported."""
    cell = "model = DetBackbone(compound_coef=compound_coef, use_cuda=use_cuda)\nif use_cuda:\n    model = model.cuda()\n"
    root = write_tree(tmp_path / "det", {"tutorial/train.ipynb": _notebook(SETUP_CELL, cell)})
    assert tree_codes_by_line(root, "tutorial/train.ipynb").get(5)


def test_a_notebook_switch_gating_nothing_reported_keeps_its_finding(tmp_path):
    """`providers = [...] if use_cuda else [...]` with no CUDA word of its own: the switch is the only CUDA line."""
    cell = "if use_cuda:\n    providers = ['A', 'B']\nelse:\n    providers = ['B']\n"
    root = write_tree(tmp_path / "det", {"tutorial/train.ipynb": _notebook(SETUP_CELL, cell)})
    assert tree_codes_by_line(root, "tutorial/train.ipynb").get(5)


def test_a_notebook_switch_read_by_a_conditional_expression_keeps_its_finding(tmp_path):
    """`x.cuda() if use_cuda else x`: not an `if` block (project test7 labels yolov7's switch read so `device`)."""
    cell = "x = x.cuda() if use_cuda else x\n"
    root = write_tree(tmp_path / "det", {"tutorial/train.ipynb": _notebook(SETUP_CELL, cell)})
    found = tree_codes_by_line(root, "tutorial/train.ipynb")
    assert found.get(5) and found.get(7)


def test_a_script_switch_is_not_read_by_the_notebook_pass(tmp_path):
    """The same lines in a `.py` script keep the static rule's reading (the notebook's switch reading is its own)."""
    found = audit_file(tmp_path, "infer.py", "import torch\nuse_cuda = True\nx = torch.zeros(2)\nif use_cuda:\n"
                                             "    x = x.cuda()\n")
    assert "NPU038" in codes_of_line(found, 2)


# pointnet2's TensorFlow op builds: nvcc with its macros on the `\`-continued line
NVCC_BUILD = """\
CUDA_INCLUDE=' -I/usr/local/cuda-10.0/include/'
TF_CFLAGS=$(python -c 'import tensorflow as tf; print(" ".join(tf.sysconfig.get_compile_flags()))')
cd tf_ops/sampling
nvcc -std=c++11 -c -o tf_sampling_g.cu.o tf_sampling_g.cu \\
 ${CUDA_INCLUDE} ${TF_CFLAGS} -D GOOGLE_CUDA=1 -x cu -Xcompiler -fPIC
nvcc -std=c++11 -c -o tf_grouping_g.cu.o tf_grouping_g.cu -DGOOGLE_CUDA=1 -x cu -Xcompiler -fPIC
cmake -S . -B build \\
  -DGGML_CUDA=ON
"""


def test_a_define_on_a_continued_nvcc_line_is_part_of_the_nvcc_build(tmp_path):
    found = audit_file(tmp_path, "compile_ops.sh", NVCC_BUILD)
    assert "NPU017" in codes_of_line(found, 4)
    assert not codes_of_line(found, 5)            # the macro belongs to the nvcc command reported on line 4
    assert "NPU017" in codes_of_line(found, 6)     # a define on the nvcc line itself: that line is reported anyway
    assert codes_of_line(found, 8)                 # cmake's CUDA switch on a continued line: another program's


def test_a_define_in_a_dockerfile_nvcc_run_is_read_the_same(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", """\
        FROM ubuntu:20.04
        RUN nvcc -c -o op_g.cu.o op_g.cu \\
            -D GOOGLE_CUDA=1 -x cu -Xcompiler -fPIC
        """)
    assert codes_of_line(found, 2) and not codes_of_line(found, 3)
