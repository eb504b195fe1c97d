"""tp59b (session 59, issue 15): project-file lines labelled `none` that the tool flagged, read by their construct:
a yacs config node named `_C`, a shell test of the script's command-line argument, and a device count in a config
section no code opens."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_findings, write_tree

# detectron2-style trees: `_C = CN()` in `config/defaults.py`, imported by name and extended (DeFRCN, SlowFast)
YACS_DEFAULTS = """\
from detectron2.config.defaults import _C
from detectron2.config import CfgNode as CN

_CC = _C
_CC.MODEL.ROI_HEADS.FREEZE_FEAT = False
_CC.TEST.PCB_ENABLE = False
"""

TRAIN_MAIN = """\
import os
from detectron2.engine import launch
from fewshot.config import get_cfg


def main(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)


if __name__ == "__main__":
    launch(main, 8, args=(None,))
"""

RUN_SCRIPT = """\
#!/usr/bin/env bash
python3 main.py --num-gpus 8 --config-file configs/base.yaml \\
    --opts OUTPUT_DIR checkpoints/base
"""


def test_yacs_config_node_is_no_compiled_extension(tmp_path):
    found = audit_file(tmp_path, "fewshot/config/defaults.py", YACS_DEFAULTS)
    expect_line_codes(found, {}, (1, 4, 5, 6))


def test_launch_of_script_importing_a_yacs_config_is_quiet(tmp_path):
    root = write_tree(tmp_path, {
        "fewshot/__init__.py": "",
        "fewshot/config/__init__.py": "from .compat import get_cfg\n",
        "fewshot/config/compat.py": "from .defaults import _CC\n\n\ndef get_cfg():\n    return _CC.clone()\n",
        "fewshot/config/defaults.py": YACS_DEFAULTS,
        "main.py": TRAIN_MAIN,
        "run.sh": RUN_SCRIPT,
    })
    # the `--num-gpus 8` launch line: no failing import behind it (the `_C` is a config node)
    assert not codes_of_line(tree_findings(root, "run.sh"), 2)


def test_package_extension_named_c_still_reported(tmp_path):
    src = """\
    from maskrcnn_benchmark import _C

    def roi_align(x, rois, size, scale, ratio):
        return _C.roi_align_forward(x, rois, scale, size[0], size[1], ratio)
    """
    found = audit_file(tmp_path, "layers/roi_align.py", src)
    assert "NPU358" in codes_of_line(found, 1)
    assert "NPU358" in codes_of_line(found, 4)


EXTRACT_SCRIPT = """\
#!/usr/bin/env bash
MODEL=$1
OUT_DIR=$2
DEVICE=$3

while IFS= read -r line; do
    if [[ "$DEVICE" == "gpu" ]]; then
        echo "python predict.py --model $MODEL --gpus=\\$(./free_gpu.sh) --in $line" >> $OUT_DIR/task
    else
        echo "python predict.py --model $MODEL --gpus= --in $line" >> $OUT_DIR/task
    fi
done < list.txt
"""


def test_test_of_the_callers_device_argument_is_quiet(tmp_path):
    found = audit_file(tmp_path, "extract.sh", EXTRACT_SCRIPT)
    expect_line_codes(found, {}, (4, 7))


def test_test_of_a_device_the_script_sets_stays_reported(tmp_path):
    own = """\
    #!/bin/bash
    inference_device="cuda"
    if [ ${inference_device} == "cuda" ]; then
        export CUDA_VISIBLE_DEVICES="0"
    fi
    """
    assert "NPU019" in codes_of_line(audit_file(tmp_path / "own", "run.sh", own), 3)
    # a default of the script's own (`${1:-cuda}`), or a second assignment, is a choice the script makes
    defaulted = """\
    #!/bin/bash
    DEVICE=${1:-cuda}
    if [ "$DEVICE" = "cuda" ]; then
        echo gpu
    fi
    """
    assert "NPU019" in codes_of_line(audit_file(tmp_path / "defaulted", "run.sh", defaulted), 3)
    reassigned = """\
    #!/bin/bash
    DEVICE=$1
    [ -z "$DEVICE" ] && DEVICE=cuda
    if [ "$DEVICE" = "cuda" ]; then
        echo gpu
    fi
    """
    assert "NPU019" in codes_of_line(audit_file(tmp_path / "reassigned", "run.sh", reassigned), 4)


DA_CONFIG = """\
data:
  dataset:
    name: officehome
    n_share: 10
  dataloader:
    batch_size: 36
model:
  base_model: resnet50
  temp: 0.05
train:
  lr: 0.01
  min_step: 10000
misc:
  gpus: 1 # how many GPUs to be used, 0 indicates CPU only
"""

DA_TRAIN = """\
import yaml
from easydict import EasyDict as edict

conf = edict(yaml.safe_load(open("configs/train.yaml")))
batch_size = conf.data.dataloader.batch_size
n_share = conf.data.dataset.n_share
model = build(conf.model.base_model, temp=conf.model.temp)
for step in range(conf.train.min_step):
    train_step(model, lr=conf.train.lr)
"""


def test_device_count_in_a_section_nothing_opens_is_quiet(tmp_path):
    root = write_tree(tmp_path, {"configs/train.yaml": DA_CONFIG, "train.py": DA_TRAIN})
    assert not codes_of_line(tree_findings(root, "configs/train.yaml"), 14)


def test_device_count_the_code_opens_stays_reported(tmp_path):
    # the `misc` section is read (its count handed to a launcher the tree does not hold): the count stays reported
    train = DA_TRAIN + "launcher.run(main, conf.misc)\n"
    root = write_tree(tmp_path, {"configs/train.yaml": DA_CONFIG, "train.py": train})
    assert "NPU028" in codes_of_line(tree_findings(root, "configs/train.yaml"), 14)


DCN_SETUP = """\
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CppExtension, CUDAExtension


def get_extensions():
    extensions_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))
    sources = main_file + source_cpu
    extension = CppExtension
    if torch.cuda.is_available():
        extension = CUDAExtension
        sources += source_cuda
    return [extension("_ext", sources, include_dirs=[extensions_dir])]


setup(name="dcn", ext_modules=get_extensions())
"""


def test_cuda_source_glob_read_only_behind_the_gate_is_quiet(tmp_path):
    found = audit_file(tmp_path, "ops/setup.py", DCN_SETUP)
    assert not codes_of_line(found, 13)
    # the gate and the extension behind it carry the findings
    assert codes_of_line(found, 16) and codes_of_line(found, 17)


def test_cuda_source_glob_built_unconditionally_stays_reported(tmp_path):
    src = DCN_SETUP.replace("    sources = main_file + source_cpu\n", "    sources = main_file + source_cpu + source_cuda\n")
    src = src.replace("        sources += source_cuda\n", "")
    found = audit_file(tmp_path, "ops/setup.py", src)
    assert "NPU383" in codes_of_line(found, 13)
