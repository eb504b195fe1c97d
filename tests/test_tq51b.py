"""Precision fixes of tq51b (session 51, tuned on heldout64's labels): copies nothing runs (policy (j)) that the copy
readings missed, and torch functions named as values.

- A copy whose self-imports name a Cython module built in place (`from recsys.model.extensions.simlib_cython import
  X` beside `simlib_cython.pyx`) and whose checkout holds only its licence (`LICENSE` beside the package, which
  discovery does not list): its modules nothing imports are info.
- A root folder named for a repository the tree's README credits ("The codebase is based on the awesome
  [AudioKit](https://github.com/...)" under `## Acknowledgments`) is a copy: what the tree's scripts never import or
  call is info; the copy's `__main__.py` runs only as `python -m`, which nothing launches (policy (s)).
- A name imported from a one-part module (`from constants import build_model`) reaches that module's definition, not
  a copy's function of the same name.
- A module-level dict of environment settings read only under `if <cluster> == "name":` (a launcher's per-cluster
  NCCL tuning for one NVIDIA InfiniBand cluster) is one member of a per-cluster set: its NCCL variables are info.
- A torch function assigned to, or read only for its name (`F.adaptive_max_pool1d = old[F.adaptive_max_pool1d.__str__]`,
  a FLOPs profiler's restore), runs no op: no NPU501 / NPU502.

Code written afresh in the shape of a recommender benchmark carrying a model zoo, a music-generation research tree
carrying an audio diffusion package, and a FLOPs profiler; not copied from the bench trees. Each has a control."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of
from tests.test_tq38 import _in, _tree

# -- a copy with a Cython module and only a licence ------------------------------------------------------------

LOADER = """\
import pandas as pd


def load_rate(path):
    return pd.read_csv(path)
"""

GENERATOR = """\
from recsys.utils.loader import load_rate


def split(path, ratio=0.8):
    frame = load_rate(path)
    cut = int(len(frame) * ratio)
    return frame[:cut], frame[cut:]
"""

KNN = """\
import numpy as np

from recsys.model.extensions.simlib_python import Compute_Similarity_Python
from recsys.model.extensions.simlib_cython import Compute_Similarity_Cython


class ItemKNNCF(object):
    def fit(self, matrix):
        return Compute_Similarity_Python(matrix)
"""

SIMLIB = """\
import numpy as np


class Compute_Similarity_Python(object):
    def __init__(self, matrix):
        self.matrix = np.asarray(matrix)
"""

VAE = """\
import os

import torch


class VAE(torch.nn.Module):
    def __init__(self, gpuid="0"):
        super().__init__()
        os.environ["CUDA_VISIBLE_DEVICES"] = gpuid

    def fit(self, loader):
        if torch.cuda.is_available():
            self.cuda()
        for batch in loader:
            batch = batch.cuda()
"""

SLIM = """\
import sys

sys.path.append("../../libs/recsys/")
from recsys.utils.loader import load_rate
from recsys.model.KNNRecommender import ItemKNNCF

if __name__ == "__main__":
    model = ItemKNNCF()
    model.fit(load_rate("ratings.csv"))
"""


def _recsys(licence: bool = True, cython: bool = True) -> dict[str, str]:
    base = "matching/libs/recsys/"
    files = {"matching/cf/slim.py": SLIM, f"{base}recsys/utils/loader.py": LOADER,
             f"{base}recsys/utils/generator.py": GENERATOR, f"{base}recsys/model/KNNRecommender.py": KNN,
             f"{base}recsys/model/extensions/simlib_python.py": SIMLIB, f"{base}recsys/model/VAERecommender.py": VAE}
    if licence:
        files[f"{base}LICENSE"] = "MIT License\n"
        # (the libraries folder's README links each library's repository: the licence is another project's)
        files["matching/libs/README.md"] = ("| library | source | licence |\n|---|---|---|\n"
                                            "| recsys | https://github.com/someone/recsys | Apache-2.0 |\n")
    if cython:
        files[f"{base}recsys/model/extensions/simlib_cython.pyx"] = "def Compute_Similarity_Cython(m):\n    return m\n"
    return files


def test_copy_with_cython_module_and_licence_is_read_as_a_copy(tmp_path):
    found = _tree(tmp_path, _recsys())
    vae = _in(found, "VAERecommender.py")
    assert vae and all(set(codes.values()) == {"info"} for codes in vae.values())


def test_copy_without_cython_source_or_licence_keeps_its_findings(tmp_path):
    # without the .pyx one self-import in three names nothing the folder holds; without the licence the folder is no
    # checkout: either way the folder is read as the tree's own
    for name, files in (("nopyx", _recsys(cython=False)), ("nolicence", _recsys(licence=False))):
        vae = _in(_tree(tmp_path / name, files), "VAERecommender.py")
        assert any(set(codes.values()) - {"info"} for codes in vae.values()), name



def test_licence_without_a_mark_of_another_project_keeps_the_folders_findings(tmp_path):
    # review51 item 9: the same folder with its licence but no README above it linking the library's repository
    files = _recsys()
    del files["matching/libs/README.md"]
    vae = _in(_tree(tmp_path, files), "VAERecommender.py")
    assert any(set(codes.values()) - {"info"} for codes in vae.values())


APP_MODEL = """\
import torch


class Captioner:
    def __init__(self, path):
        self.net = torch.jit.load(path).cuda().eval()

    @torch.no_grad()
    def __call__(self, image):
        return self.net(image.cuda())
"""

APP_API = """\
from fastapi import FastAPI

from myapp.model import Captioner

app = FastAPI()
captioner = Captioner("weights/captioner.pt")


@app.post("/caption")
def caption(image: list):
    return {"caption": str(captioner(image))}
"""

APP_EVAL = """\
import torch

from myapp.model import Captioner

if __name__ == "__main__":
    c = Captioner("weights/captioner.pt")
    torch.cuda.synchronize()
    print(c(torch.zeros(1, 3, 224, 224)))
"""


def test_app_sub_project_with_its_own_licence_keeps_its_findings(tmp_path):
    # a monorepo's backend `server/` with its licence and its own README (`uvicorn myapp.api:app`): the app's code
    files = {"README.md": "# Demo\n\nA web demo. See server/README.md for the backend.\n",
             "requirements.txt": "fastapi\nuvicorn\ntorch\n", "web/app.js": "console.log('hi')\n",
             "server/LICENSE": "MIT License\n", "server/README.md": "```\ncd server\nuvicorn myapp.api:app\n```\n",
             "server/myapp/__init__.py": "", "server/myapp/model.py": APP_MODEL, "server/myapp/api.py": APP_API,
             "server/myapp/eval_offline.py": APP_EVAL}
    found = _tree(tmp_path, files)
    for name in ("model.py", "eval_offline.py"):
        lines = _in(found, f"myapp/{name}")
        assert lines and any(set(codes.values()) - {"info"} for codes in lines.values()), name

# -- a root folder named for a credited repository ------------------------------------------------------------

README = """\
# MusicFlow

Text-to-music generation with rectified flow transformers.

## Training

    python train.py --config config/base.yaml

### Acknowledgments

The codebase is based on the awesome [AudioKit](https://github.com/someone/AudioKit) repo.
"""

README_UNCREDITED = """\
# MusicFlow

Text-to-music generation. The VAE weights come from [AudioKit](https://github.com/someone/AudioKit).
"""

# the project's own repository: a README that links into its files says so, whatever a line around it says
README_OWN = """\
# AudioKit

[![Tests](https://github.com/someone/AudioKit/actions/workflows/test.yml/badge.svg)](https://github.com/someone/AudioKit/actions)

A text-to-audio toolkit based on latent diffusion ([AudioKit](https://github.com/someone/AudioKit)).
See [the training example](https://github.com/someone/AudioKit/blob/main/examples/train.ipynb).
"""

INIT = """\
from .utils import seed_everything, save_wave
from .pipeline import *
"""

UTILS = """\
import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


def save_wave(wave, path):
    np.save(path, wave)
"""

PIPELINE = """\
import torch


def build_model(ckpt_path=None):
    model = torch.load(ckpt_path)
    return model.cuda()
"""

MAIN = """\
import torch

from audiokit import build_model

model = build_model("ckpt.pt")
model.half().cuda()
"""

DATASET = """\
import torch


class AudioDataset(torch.utils.data.Dataset):
    def __init__(self, files):
        self.files = files

    def __getitem__(self, i):
        return torch.load(self.files[i], map_location="cpu")
"""

TRAIN_UTILS = """\
import torch


class NativeScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()
"""

CONSTANTS = """\
from model import Flow


def build_model(depth):
    return Flow(depth)
"""

MODEL = """\
import torch


class Flow(torch.nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(depth))
"""

TRAIN = """\
import argparse

import torch

from audiokit.data.dataset import AudioDataset
from constants import build_model


def main(args):
    model = build_model(args.depth)
    data = AudioDataset(args.files)
    model.to("cuda")
    return model, data


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=4)
    main(parser.parse_args())
"""


def _music(readme: str) -> dict[str, str]:
    return {"README.md": readme, "train.py": TRAIN, "constants.py": CONSTANTS, "model.py": MODEL,
            "audiokit/__init__.py": INIT, "audiokit/utils.py": UTILS, "audiokit/pipeline.py": PIPELINE,
            "audiokit/__main__.py": MAIN, "audiokit/data/__init__.py": "", "audiokit/data/dataset.py": DATASET,
            "audiokit/train_utils.py": TRAIN_UTILS}


def test_root_folder_named_for_a_credited_repository_is_a_copy(tmp_path):
    found = _tree(tmp_path, _music(README))
    for name in ("audiokit/utils.py", "audiokit/pipeline.py", "audiokit/__main__.py", "audiokit/train_utils.py"):
        lines = _in(found, name)
        assert lines and all(set(codes.values()) == {"info"} for codes in lines.values()), name
    # the tree's own script keeps its finding
    train = _in(found, "train.py")
    assert any(set(codes.values()) - {"info"} for codes in train.values())


def test_root_folder_without_a_credit_keeps_its_findings(tmp_path):
    # a link to the repository that is no credit (where weights come from), or to the tree's own repository (linked
    # into its files and pages), makes the folder no copy
    for name, readme in (("uncredited", README_UNCREDITED), ("own", README_OWN)):
        found = _tree(tmp_path / name, _music(readme))
        for rel in ("audiokit/utils.py", "audiokit/train_utils.py"):
            lines = _in(found, rel)
            assert any(set(codes.values()) - {"info"} for codes in lines.values()), (name, rel)


# -- torch functions named as values --------------------------------------------------------------------------

PROFILER = """\
import torch.nn.functional as F

old_functions = {}


def wrap(func, counter):
    old_functions[func.__str__] = func

    def wrapped(*args, **kwargs):
        counter(*args)
        return func(*args, **kwargs)
    return wrapped


def patch(counter):
    F.adaptive_max_pool1d = wrap(F.adaptive_max_pool1d, counter)


def restore():
    F.adaptive_max_pool1d = old_functions[F.adaptive_max_pool1d.__str__]


def pool(x):
    return F.adaptive_max_pool1d(x, 4)
"""


def test_torch_function_assigned_or_named_runs_no_op(coverage_engine):
    found = findings_by_line(coverage_engine, PROFILER, "utils/mfu/flops_profiler.py")
    coverage = {"NPU501", "NPU502"}
    assert not [f for f in found.get(line_of(PROFILER, "F.adaptive_max_pool1d = old_functions"), [])
                if f.code in coverage]
    # the control: calling the op keeps the coverage finding
    assert any(f.code in coverage for f in found.get(line_of(PROFILER, "return F.adaptive_max_pool1d(x, 4)"), []))


# -- per-cluster environment sets -----------------------------------------------------------------------------

CLUSTER_ENV = """\
import os

BASE_ENVIRONS = {
    "TOKENIZERS_PARALLELISM": "true",
    "NCCL_DEBUG": "WARN",
}
SITE_A_ENVIRONS = {
    "NCCL_SOCKET_IFNAME": "bond0",
    "NCCL_IB_GID_INDEX": "3",
    "NCCL_IB_HCA": "mlx5_bond",
}


def get_env_vars(cluster_name, extra=None):
    env = {**BASE_ENVIRONS, **(extra or {})}
    if cluster_name == "site_a":
        env.update(**SITE_A_ENVIRONS)
    return env


def launch(cfg, cmd):
    env = get_env_vars(cfg.cluster.cluster_name)
    os.execvpe(cmd[0], cmd, {**os.environ, **env})
"""


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_environment_set_of_one_named_cluster_is_a_member(engine):
    found = findings_by_line(engine, CLUSTER_ENV, "areal/utils/launcher.py")
    for needle in ('"NCCL_IB_GID_INDEX": "3"', '"NCCL_IB_HCA": "mlx5_bond"'):
        codes = {(f.code, f.severity) for f in found.get(line_of(CLUSTER_ENV, needle), [])}
        assert codes and {sev for _, sev in codes} == {"info"}, needle
    # the control: the set every run takes keeps its finding
    base = {f.severity for f in found.get(line_of(CLUSTER_ENV, '"NCCL_DEBUG": "WARN"'), [])}
    assert base - {"info"}


def test_environment_set_read_outside_the_cluster_test_keeps_its_findings(engine):
    src = CLUSTER_ENV.replace("    env = {**BASE_ENVIRONS, **(extra or {})}",
                              "    env = {**BASE_ENVIRONS, **SITE_A_ENVIRONS, **(extra or {})}")
    found = findings_by_line(engine, src, "areal/utils/launcher.py")
    assert {f.severity for f in found.get(line_of(src, '"NCCL_IB_HCA": "mlx5_bond"'), [])} - {"info"}


# review51 item 5: one table under the cluster the run takes by default is no member of a set
DEFAULT_CLUSTER_ENV = """\
import argparse
import os
import subprocess

# settings our NVIDIA A100 cluster needs for multi-node training
IB_ENVIRONS = {
    "NCCL_IB_HCA": "mlx5_0,mlx5_1",
    "NCCL_SOCKET_IFNAME": "ib0",
    "CUDA_DEVICE_MAX_CONNECTIONS": "1",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", default="slurm", choices=["local", "slurm"])
    parser.add_argument("--nodes", type=int, default=1)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.cluster == "slurm":
        env.update(IB_ENVIRONS)
        cmd = ["srun", f"--nodes={args.nodes}", "python", "train.py"]
    else:
        cmd = ["torchrun", "--nproc_per_node=8", "train.py"]
    subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    main()
"""


def test_environment_table_of_the_default_cluster_keeps_its_findings(engine):
    found = findings_by_line(engine, DEFAULT_CLUSTER_ENV, "tools/launch.py")
    for needle in ('"NCCL_IB_HCA": "mlx5_0,mlx5_1"', '"CUDA_DEVICE_MAX_CONNECTIONS": "1"'):
        assert {f.severity for f in found.get(line_of(DEFAULT_CLUSTER_ENV, needle), [])} - {"info"}, needle


def test_environment_table_with_no_second_member_or_base_keeps_its_findings(engine):
    # "slurm" no longer the default, but the table is still alone: no other cluster's set, no base set
    src = DEFAULT_CLUSTER_ENV.replace('default="slurm"', 'default="local"')
    found = findings_by_line(engine, src, "tools/launch.py")
    assert {f.severity for f in found.get(line_of(src, '"NCCL_IB_HCA": "mlx5_0,mlx5_1"'), [])} - {"info"}


TWO_CLUSTER_ENV = """\
import os

A100_ENVIRONS = {"NCCL_IB_HCA": "mlx5_bond", "NCCL_IB_GID_INDEX": "3"}
H800_ENVIRONS = {"NCCL_IB_HCA": "mlx5_0", "NCCL_NET_GDR_LEVEL": "2"}


def cluster_envvars(cluster_name="local"):
    env = {}
    if cluster_name == "a100":
        env.update(**A100_ENVIRONS)
    if cluster_name == "h800":
        env.update(**H800_ENVIRONS)
    return env
"""


def test_environment_tables_of_two_named_clusters_are_members(engine):
    found = findings_by_line(engine, TWO_CLUSTER_ENV, "realhf/base/constants.py")
    for needle in ('"NCCL_IB_GID_INDEX": "3"', '"NCCL_NET_GDR_LEVEL": "2"'):
        codes = {f.severity for f in found.get(line_of(TWO_CLUSTER_ENV, needle), [])}
        assert codes == {"info"}, needle
    # the same set with "a100" the function's default: the default run applies that table
    src = TWO_CLUSTER_ENV.replace('cluster_name="local"', 'cluster_name="a100"')
    found = findings_by_line(engine, src, "realhf/base/constants.py")
    assert {f.severity for f in found.get(line_of(src, '"NCCL_IB_GID_INDEX": "3"'), [])} - {"info"}
    assert {f.severity for f in found.get(line_of(src, '"NCCL_NET_GDR_LEVEL": "2"'), [])} == {"info"}


# review51 item 2: a fork's own package, named for the repository its README credits, is the tree's code
FORK_README = """\
# LLaVA-Med-Next: a biomedical multimodal assistant

## Train

```bash
bash scripts/finetune.sh
```

## Serve

```bash
python -m llava.serve.cli --model-path checkpoints/llava-med-next
```

## Acknowledgement

- [LLaVA](https://github.com/haotian-liu/LLaVA): the codebase we built upon, and our base model.
"""

FORK_BUILDER = """\
import torch


def load_pretrained_model(model_path, device="cuda"):
    model = torch.load(model_path, map_location="cpu")
    return model.to(device).half()
"""

FORK_CLI = """\
import argparse

import torch

from llava.model.builder import load_pretrained_model


def main(args):
    model = load_pretrained_model(args.model_path)
    streamer_device = torch.device("cuda")
    ids = torch.tensor([[1]]).to(streamer_device)
    print(model(ids))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", type=str)
    main(parser.parse_args())
"""

FORK_EVAL = """\
import argparse

import torch

from llava.model.builder import load_pretrained_model


def eval_model(args):
    model = load_pretrained_model(args.model_path)
    images = torch.zeros(1, 3, 336, 336).half().cuda()
    print(model(images))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", type=str)
    eval_model(parser.parse_args())
"""

FORK_TRAIN = """\
import torch
import torch.distributed as dist

from llava.model.builder import load_pretrained_model


def train():
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    load_pretrained_model("base.pt").train()


if __name__ == "__main__":
    train()
"""


def _fork() -> dict[str, str]:
    return {"README.md": FORK_README, "scripts/finetune.sh": "deepspeed llava/train/train_mem.py --output_dir out\n",
            "llava/__init__.py": "", "llava/model/__init__.py": "", "llava/model/builder.py": FORK_BUILDER,
            "llava/serve/__init__.py": "", "llava/serve/cli.py": FORK_CLI, "llava/eval/__init__.py": "",
            "llava/eval/model_vqa_med.py": FORK_EVAL, "llava/train/__init__.py": "",
            "llava/train/train_mem.py": FORK_TRAIN}


def test_a_forks_own_package_named_for_the_credited_repository_keeps_its_findings(tmp_path):
    found = _tree(tmp_path, _fork())
    for name in ("llava/serve/cli.py", "llava/eval/model_vqa_med.py"):
        lines = _in(found, name)
        assert lines and any(set(codes.values()) - {"info"} for codes in lines.values()), name


def test_a_credited_copys_program_a_readme_command_runs_keeps_its_findings(tmp_path):
    # the folder is a copy (a root script imports it, no script launches it), but the README documents its CLI
    files = _fork()
    files["scripts/finetune.sh"] = "python train.py --output_dir out\n"
    files["train.py"] = "from llava.model.builder import load_pretrained_model\n\nload_pretrained_model('a.pt')\n"
    found = _tree(tmp_path, files)
    cli = _in(found, "llava/serve/cli.py")
    assert cli and any(set(codes.values()) - {"info"} for codes in cli.values())
    vqa = _in(found, "llava/eval/model_vqa_med.py")
    assert vqa and all(set(codes.values()) == {"info"} for codes in vqa.values())
