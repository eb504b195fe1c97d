"""tq57b (precision bench, session 57; tuned on heldout76 rows 81-120): a program among a copied package's modules
(a file with a `__main__` block, CLAP's `training/main.py` beside the `training/data.py` the tree imports) is
upstream's program, not a module the tree may import: nothing in the tree runs it unless a launch of the tree names
it (policy (j)). A tree modelled on a model repository that carries LAION-CLAP's `training/` package, with the tree's
own launcher as the control."""
from __future__ import annotations

import pytest

from tests.static_snippets import dedented_tree, severity_at

# the tree's own encoder, which imports the copy's data helpers by its path in the tree
ENCODER = '''
    import torch.nn as nn

    from .clap_modules.training.data import get_audio_features


    class CLAPEncoder(nn.Module):
        def forward(self, wav):
            return get_audio_features(wav)
'''

DATA = '''
    import torch


    def get_audio_features(wav):
        return torch.as_tensor(wav).cuda()
'''

TRAIN = '''
    import torch


    def train_one_epoch(model, batch):
        return model(batch.cuda())
'''

# upstream's training program: it imports its own package by its bare name (`from training.x import ...`)
MAIN = '''
    import argparse

    import torch
    from torch.cuda.amp import GradScaler

    from training.data import get_audio_features
    from training.train import train_one_epoch


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="amp")
        args = parser.parse_args()
        scaler = GradScaler() if args.precision == "amp" else None
        return scaler, train_one_epoch, get_audio_features


    if __name__ == "__main__":
        main()
'''

LAUNCH = '''
    cd models/encoders/clap_modules
    python training/main.py --precision amp
'''


def _tree(launcher: bool) -> dict[str, str]:
    files = {"README.md": "# any-to-any generation\n", "models/__init__.py": "",
             "models/encoders/clap.py": ENCODER, "models/encoders/clap_modules/__init__.py": "",
             "models/encoders/clap_modules/training/__init__.py": "",
             "models/encoders/clap_modules/training/data.py": DATA,
             "models/encoders/clap_modules/training/train.py": TRAIN,
             "models/encoders/clap_modules/training/main.py": MAIN}
    if launcher:
        files["train_clap.sh"] = LAUNCH
    return files


@pytest.mark.parametrize(("launcher", "severity"), [(False, "info"), (True, "error")])
def test_program_of_a_copied_package_runs_only_when_the_tree_launches_it(tmp_path, launcher, severity):
    found = dedented_tree(tmp_path, _tree(launcher))
    rel = "models/encoders/clap_modules/training/main.py"
    assert severity_at(found, rel, MAIN, "scaler = GradScaler()").get("NPU012") == severity


def test_imported_module_of_the_copy_keeps_its_findings(tmp_path):
    # (the copy's modules keep their reach: the one the tree imports, and a module beside it that the tree may
    # import, which is no program)
    found = dedented_tree(tmp_path, _tree(False))
    assert severity_at(found, "models/encoders/clap_modules/training/data.py", DATA, ".cuda()").get("NPU001") == "error"
    assert severity_at(found, "models/encoders/clap_modules/training/train.py", TRAIN, ".cuda()").get("NPU001") == "error"
