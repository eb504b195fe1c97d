"""tp51a (session 51, project test142 and test143): families the project-file readers missed on session 50's blind
project splits (super-resolution, NeRF). Recall: BasicSR's option files in a tree that imports BasicSR from outside
(`dist_params: backend: nccl`, NPU122: BasicSR's `parse_options` reads the file and calls `init_dist(...,
**opt['dist_params'])`), and Slurm options written as a quoted dict in a shell script (NSVF's `SLURM_ARGS` holding `{'gpus': 8,
'constraint': 'volta32gb'}` in a triple-quoted string, read as sbatch's `--gpus` / `--constraint`). Quiet: a key nobody reads in a tree
without BasicSR or holding its own copy, one-key or non-Slurm JSON payloads, messages, comments and zero counts.
Shaped on DRCT / Real-ESRGAN / MambaIR and NSVF; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_codes_by_line, write_tree


BASICSR_OPTIONS = """\
name: DRCT_SRx4_finetune
model_type: DRCTModel
scale: 4
num_gpu: auto
manual_seed: 0

network_g:
  type: DRCT
  upscale: 4

train:
  ema_decay: 0.999
  total_iter: 250000

logger:
  print_freq: 100
  use_tb_logger: true

# dist training settings
dist_params:
  backend: nccl
  port: 29500
"""

# the tree's own code reads the options key by key (`opt['train']`, `opt['logger']`) and never names `dist_params`;
# BasicSR's train_pipeline (a requirement, not held) parses the file and calls init_dist with it
BASICSR_TRAIN = """\
import os.path as osp
import drct.archs
from basicsr.train import train_pipeline

if __name__ == '__main__':
    root_path = osp.abspath(osp.join(__file__, osp.pardir, osp.pardir))
    train_pipeline(root_path)
"""

BASICSR_MODEL = """\
from basicsr.models.sr_model import SRModel


class DRCTModel(SRModel):
    def setup(self, opt):
        self.ema = opt['train']['ema_decay']
        self.total = opt['train']['total_iter']
        self.freq = opt['logger']['print_freq']
        self.tb = opt['logger']['use_tb_logger']
"""


def test_basicsr_options_read_by_basicsr_outside_the_tree(tmp_path):
    root = write_tree(tmp_path / "drct", {"options/train/train_x4.yml": BASICSR_OPTIONS, "drct/train.py": BASICSR_TRAIN,
                                          "drct/models/drct_model.py": BASICSR_MODEL,
                                          "requirements.txt": "einops\ntorch>=1.7\nbasicsr==1.3.4.9\n"})
    found = tree_codes_by_line(root, "options/train/train_x4.yml")
    assert found.get(21) == {"NPU122"}                     # `backend: nccl` under dist_params
    assert not found.get(19) and not found.get(4)          # the comment; `num_gpu: auto` is a count


def test_basicsr_options_without_basicsr_or_with_a_held_copy(tmp_path):
    # the same key in a tree that imports no BasicSR and reads the file key by key itself (decision 35)
    plain = BASICSR_MODEL.replace("from basicsr.models.sr_model import SRModel", "SRModel = object")
    root = write_tree(tmp_path / "plain", {"options/train_x4.yml": BASICSR_OPTIONS, "models/model.py": plain})
    assert not tree_codes_by_line(root, "options/train_x4.yml").get(21)
    # a tree that holds BasicSR (MambaIR's `basicsr/`): its own reads decide; this copy never opens dist_params
    held = write_tree(tmp_path / "held", {"options/train_x4.yml": BASICSR_OPTIONS,
                                          "basicsr/models/drct_model.py": BASICSR_MODEL,
                                          "basicsr/train.py": "def train_pipeline(root):\n    return root\n"})
    assert not tree_codes_by_line(held, "options/train_x4.yml").get(21)
    # ... and one whose copy reads it (`init_dist(args.launcher, **opt['dist_params'])`) keeps it
    reader = ("from basicsr.utils.dist_util import init_dist\n\n\ndef parse_options(opt, args):\n"
              "    if args.launcher == 'slurm' and 'dist_params' in opt:\n"
              "        init_dist(args.launcher, **opt['dist_params'])\n")
    held = write_tree(tmp_path / "held2", {"options/train_x4.yml": BASICSR_OPTIONS,
                                           "basicsr/models/drct_model.py": BASICSR_MODEL,
                                           "basicsr/utils/options.py": reader})
    assert tree_codes_by_line(held, "options/train_x4.yml").get(21) == {"NPU122"}


SLURM_DICT_SCRIPT = '''\
DATA="Wineholder"
SAVE=/checkpoint/space/$DATA
# By defining the following environment variables
# The code will automatically detect it and submit the job to slurm
export SLURM_ARGS="""{
    'job-name': '${DATA}-${MODEL}',
    'partition': 'priority',
    'comment': 'open-source release',
    'nodes': 1,
    'gpus': 8,
    'output': '$SAVE/$MODEL/train.out',
    'constraint': 'volta32gb',
    'local': False}
"""
python train.py ${DATA} --user-dir fairnr --arch nsvf_base
'''


def test_slurm_options_in_a_python_dict_string(tmp_path):
    found = audit_file(tmp_path, "examples/train/train_with_slurm.sh", SLURM_DICT_SCRIPT)
    expect_line_codes(found, {10: {"NPU028"}, 12: {"NPU022"}}, (3, 4, 5, 6, 7, 8, 9, 11, 13))


SLURM_JSON_SCRIPT = """\
#!/bin/bash
export SUBMIT_ARGS='{"partition": "gpu_a100", "gpus_per_node": 4, "nodes": 2, "time": "24:00:00"}'
python submit.py --slurm '{"partition": "learnfair", "gres": "gpu:8", "cpus_per_task": 10}'
CPU_ARGS='{"partition": "cpu", "gpus": 0, "nodes": 1}'
PAYLOAD='{"nodes": 4, "name": "graph-run", "gpus": 2}'
REQUEST='{"gpus": 2, "model": "llama"}'
echo "{'gpus': 8, 'constraint': 'volta32gb'}"
# SLURM_ARGS='{"gpus": 8, "constraint": "volta32gb"}'
LAUNCH_ARGS='{"slurm_partition": "gpu", "slurm_gres": "gpu:4", "timeout_min": 60}'
"""


def test_slurm_options_in_json_strings_and_controls(tmp_path):
    found = audit_file(tmp_path, "scripts/submit.sh", SLURM_JSON_SCRIPT)
    assert "NPU022" in codes_of_line(found, 2)            # gpus_per_node (and the GPU partition)
    assert "NPU028" in codes_of_line(found, 3)            # gres gpu:8
    # a CPU job's dict, a message and a comment stay quiet; a payload whose one Slurm-like key is all it shares with
    # sbatch is no job (`REQUEST`)
    expect_line_codes(found, {}, (4, 6, 7, 8))
    # `PAYLOAD` has two sbatch option names (`nodes`, `gpus`): read as a job's request, as the rule asks
    assert "NPU028" in codes_of_line(found, 5)
    assert codes_of_line(found, 9) == {"NPU028"}          # submitit's `slurm_*` spellings of the same options
