"""tq56c (precision bench, session 56; TUNED on heldout75 trees 1-4): the program a W&B sweep configuration of the tree
names (`program: main.py` beside `method` / `parameters`) is the tree's own program (decision (t)), even inside a
folder read as another project's copy. A tree modelled on LibMoE's `language_modeling/`, with a positive and a quiet
control."""
from __future__ import annotations

import pytest

from tests.static_snippets import dedented_tree, severity_at

# LibMoE's `language_modeling/`: its requirements file, the `layers` package importing itself by bare name, and
# `main.py`, the program its W&B sweep configurations name (`program: main.py`), which `run.py` and a W&B agent run
SWEEP = '''
    program: main.py
    command:
      - ${env}
      - python3
      - ${program}
      - ${args}
    method: grid
    parameters:
      log:
        value: wandb
      lr:
        value: 0.00025
'''

NOT_A_SWEEP = '''
    model: main
    lr: 0.00025
'''

LM_MAIN = '''
    import torch
    from layers.moe import MoE


    def main():
        torch.distributed.init_process_group("nccl")
        return MoE()


    if __name__ == "__main__":
        main()
'''

LM_LAYERS_INIT = '''
    from layers.moe import MoE
    from layers.cvmm import cvmm
'''

LM_MOE = '''
    import torch.nn as nn
    from layers.cvmm import cvmm


    class MoE(nn.Module):
        def forward(self, x):
            return cvmm(x)
'''

LM_CVMM = '''
    def cvmm(x):
        return x
'''


def _lm_tree(config: str) -> dict[str, str]:
    return {"README.md": "# LibMoE\n", "language_modeling/requirements.txt": "torch\n",
            "language_modeling/main.py": LM_MAIN, "language_modeling/sweeps/154M/dense_154M.yaml": config,
            "language_modeling/layers/__init__.py": LM_LAYERS_INIT, "language_modeling/layers/moe.py": LM_MOE,
            "language_modeling/layers/cvmm.py": LM_CVMM}


@pytest.mark.parametrize(("config", "severity"), [(SWEEP, "error"), (NOT_A_SWEEP, "info")])
def test_program_a_sweep_configuration_names_keeps_its_findings(tmp_path, config, severity):
    # (a config that is no sweep names no program: main.py stays the copy's unreached code)
    found = dedented_tree(tmp_path, _lm_tree(config))
    assert severity_at(found, "language_modeling/main.py", LM_MAIN, '"nccl"').get("NPU101") == severity


# the sweep's program loads its tasks by computed names (`framework/task/__init__.py` importing every module of its
# folder); the sibling folder read as a copy, `vision_language_model/` with its lmms-eval adapters nothing imports,
# keeps its reading
TASK_LOADER = '''
    import importlib
    import os

    for module in os.listdir(os.path.dirname(__file__)):
        if module.endswith(".py") and module != "__init__.py":
            importlib.import_module(__name__ + "." + module[:-3])
'''

LM_MAIN_TASKS = LM_MAIN.replace("from layers.moe import MoE", "from layers.moe import MoE\n    import framework.task")

ADAPTER = '''
    import torch
    from lmms_eval.api.model import lmms

    DEVICE = torch.device("cuda:0")
'''


def _two_projects(config: str) -> dict[str, str]:
    tree = _lm_tree(config)
    tree.update({"language_modeling/main.py": LM_MAIN_TASKS, "language_modeling/framework/__init__.py": "",
                 "language_modeling/framework/task/__init__.py": TASK_LOADER,
                 "language_modeling/framework/task/simple_task.py": "class SimpleTask:\n    pass\n",
                 "vision_language_model/requirements.txt": "torch\n",
                 "vision_language_model/evaluate/setup.py": "from setuptools import setup\nsetup(name='lmms_eval')\n",
                 "vision_language_model/evaluate/lmms_eval/__init__.py": "",
                 "vision_language_model/evaluate/lmms_eval/api/__init__.py": "",
                 "vision_language_model/evaluate/lmms_eval/api/model.py": "class lmms:\n    pass\n",
                 "vision_language_model/evaluate/lmms_eval/models/__init__.py":
                     "from lmms_eval.api.model import lmms\nfrom lmms_eval.api import model\n",
                 "vision_language_model/evaluate/lmms_eval/models/vila.py": ADAPTER})
    return tree


def test_a_sweeps_loader_leaves_a_sibling_copy_unreached(tmp_path):
    found = dedented_tree(tmp_path, _two_projects(SWEEP))
    assert severity_at(found, "language_modeling/main.py", LM_MAIN_TASKS, '"nccl"').get("NPU101") == "error"
    at = severity_at(found, "vision_language_model/evaluate/lmms_eval/models/vila.py", ADAPTER, '"cuda:0"')
    assert at.get("NPU003") == "info"
