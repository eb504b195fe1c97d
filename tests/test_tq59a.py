"""tq59a (precision bench, session 59; tuned on heldout78's PnPInversion and molmoact rows): copied code nothing in
the tree runs is info (policy (j)).

- A copied repository around a copied package (an image-editing benchmark carrying Instruct-Pix2Pix's repository, with
  its licence, conda environment, CLI and training programs, around the `stable_diffusion/` checkout whose `ldm`
  package the benchmark loads): the repository's own programs and the nested checkout's environment file are info; the
  nested checkout's `scripts/` and the package the tree loads keep their findings.
- A package carried with another project's release version and imported by its path in the tree
  (`from models.edict.my_diffusers import UNet2DConditionModel`, an old diffusers): its classes nothing names are info.
- A guarded optional import whose names (and the availability flag its arms set) nothing reads: info.
"""
from __future__ import annotations

import pytest

from tests.static_snippets import dedented_tree, severity_at

# the benchmark's own runner: it puts the nested checkout on sys.path and loads its `ldm` package
RUNNER = '''
    import sys

    import torch
    from omegaconf import OmegaConf

    sys.path.append("models/instructpix2pix/stable_diffusion")
    from ldm.util import instantiate_from_config


    def load_model(config_path, ckpt):
        config = OmegaConf.load(config_path)
        model = instantiate_from_config(config.model)
        model.load_state_dict(torch.load(ckpt, map_location="cpu")["state_dict"], strict=False)
        return model.eval().cuda()
'''

LDM_UTIL = '''
    import importlib

    from ldm.modules.attention import CrossAttention


    def get_obj_from_str(string):
        module, cls = string.rsplit(".", 1)
        return getattr(importlib.import_module(module), cls)


    def instantiate_from_config(config):
        return get_obj_from_str(config["target"])(**config.get("params", dict()))
'''

LDM_ATTENTION = '''
    import torch.nn as nn

    from ldm.modules.util import default


    class CrossAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, default(dim, 4))
'''

LDM_MODULE_UTIL = '''
    def default(val, d):
        return d if val is None else val
'''

# the copied repository's own CLI program, at its top
EDIT_CLI = '''
    import sys

    import torch
    from omegaconf import OmegaConf

    sys.path.append("./stable_diffusion")
    from ldm.util import instantiate_from_config


    def main():
        config = OmegaConf.load("configs/generate.yaml")
        model = instantiate_from_config(config.model)
        model.eval().cuda()
        return model


    if __name__ == "__main__":
        main()
'''

# the nested checkout's own script (policy (j): a copy's `scripts/` a user may run keeps its findings)
TXT2IMG = '''
    import torch


    def main():
        device = torch.device("cuda")
        return torch.zeros(1).to(device)


    if __name__ == "__main__":
        main()
'''

SD_ENV = '''
    name: ldm
    channels:
      - pytorch
    dependencies:
      - python=3.8.5
      - cudatoolkit=11.3
      - pytorch=1.11.0
'''

P2P_ENV = '''
    name: ip2p
    dependencies:
      - python=3.8.5
      - pytorch=1.11.0
'''

LICENCE = "Copyright 2023 Timothy Brooks, Aleksander Holynski, Alexei A. Efros\n\nPermission is hereby granted...\n"


def _editing_tree(licence: bool) -> dict[str, str]:
    files = {"README.md": "# editing benchmark\n", "run_editing_instructpix2pix.py": RUNNER,
             "models/instructpix2pix/environment.yaml": P2P_ENV,
             "models/instructpix2pix/edit_cli.py": EDIT_CLI,
             "models/instructpix2pix/stable_diffusion/setup.py": "from setuptools import setup\nsetup(name='latent-diffusion')\n",
             "models/instructpix2pix/stable_diffusion/environment.yaml": SD_ENV,
             "models/instructpix2pix/stable_diffusion/scripts/txt2img.py": TXT2IMG,
             "models/instructpix2pix/stable_diffusion/ldm/__init__.py": "",
             "models/instructpix2pix/stable_diffusion/ldm/util.py": LDM_UTIL,
             "models/instructpix2pix/stable_diffusion/ldm/modules/__init__.py": "",
             "models/instructpix2pix/stable_diffusion/ldm/modules/attention.py": LDM_ATTENTION,
             "models/instructpix2pix/stable_diffusion/ldm/modules/util.py": LDM_MODULE_UTIL}
    if licence:
        files["models/instructpix2pix/LICENSE"] = LICENCE
    return files


@pytest.mark.parametrize(("licence", "severity"), [(True, "info"), (False, "error")])
def test_programs_of_a_copied_repository_around_a_copied_package(tmp_path, licence, severity):
    found = dedented_tree(tmp_path, _editing_tree(licence))
    assert severity_at(found, "models/instructpix2pix/edit_cli.py", EDIT_CLI, "model.eval().cuda()").get("NPU001") == \
        severity
    # (the nested checkout's environment file: nothing creates it; the benchmark's own runner and the nested
    # checkout's scripts keep their findings)
    env = severity_at(found, "models/instructpix2pix/stable_diffusion/environment.yaml", SD_ENV, "cudatoolkit")
    assert set(env.values()) == {severity}
    assert severity_at(found, "run_editing_instructpix2pix.py", RUNNER, ".cuda()").get("NPU001") == "error"
    assert "error" in severity_at(found, "models/instructpix2pix/stable_diffusion/scripts/txt2img.py", TXT2IMG,
                                  'torch.device("cuda")').values()


COPY_INIT = '''
    __version__ = "0.3.0"

    from .models.unet import UNet2DConditionModel
    from .pipelines.ddpm import DDPMPipeline
'''

COPY_UNET = '''
    import torch
    import torch.nn as nn


    class UNet2DConditionModel(nn.Module):
        def forward(self, x):
            return x.to("cuda")
'''

COPY_PIPELINE = '''
    import torch


    class DDPMPipeline:
        def __init__(self, unet):
            self.unet = unet

        def __call__(self, batch_size=1):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            return self.unet(torch.randn(batch_size, 3, 64, 64, device=device))
'''

EDICT = '''
    import torch

    from models.edict.my_diffusers import UNet2DConditionModel


    def load_unet():
        return UNet2DConditionModel()
'''


def test_versioned_copy_imported_by_its_path_in_the_tree(tmp_path):
    files = {"README.md": "# editing benchmark\n", "run_editing_edict.py": EDICT,
             "models/edict/my_diffusers/__init__.py": COPY_INIT,
             "models/edict/my_diffusers/models/__init__.py": "",
             "models/edict/my_diffusers/models/unet.py": COPY_UNET,
             "models/edict/my_diffusers/pipelines/__init__.py": "",
             "models/edict/my_diffusers/pipelines/ddpm.py": COPY_PIPELINE}
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "models/edict/my_diffusers/pipelines/ddpm.py", COPY_PIPELINE,
                       "torch.cuda.is_available()").get("NPU002") == "info"
    # (the class the tree builds keeps its finding)
    assert severity_at(found, "models/edict/my_diffusers/models/unet.py", COPY_UNET, 'x.to("cuda")').get("NPU003") == \
        "error"


OPTIM = '''
    import torch

    try:
        from megablocks.layers.mlp import MLP, SparseMLP

        megablocks_available = True
    except ImportError:
        megablocks_available = False


    def build_optimizer(params, lr):
        return torch.optim.AdamW(params, lr=lr)
'''

# another module asks the flag: the import's failure changes what it builds
MODEL = '''
    import torch.nn as nn

    from olmo.train.optim import megablocks_available


    def ffn(dim):
        return nn.Identity() if megablocks_available else nn.Linear(dim, dim)
'''


@pytest.mark.parametrize(("reader", "severity"), [(False, "info"), (True, "warning")])
def test_guarded_import_whose_names_nothing_reads(tmp_path, reader, severity):
    files = {"olmo/__init__.py": "", "olmo/train/__init__.py": "", "olmo/train/optim.py": OPTIM}
    if reader:
        files["olmo/nn/__init__.py"] = ""
        files["olmo/nn/ffn.py"] = MODEL
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "olmo/train/optim.py", OPTIM, "from megablocks").get("NPU411") == severity
