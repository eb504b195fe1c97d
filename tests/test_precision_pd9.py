"""Precision fix of pd9 (session 17, after the draw; heldout21 is TUNED ON from here): in a ComfyUI node pack, the
`if __name__ == "__main__":` block of a file with a module-level package-relative import (`from ...lvdm.models
import DDIMSampler`) never runs (run as a script, the relative import raises ImportError first), so a definition only
that block calls is unreached (info, context `unreached`). The control: the same CLI with absolute imports can run
as a script, and its `__main__` keeps reaching the definition. And a bare call of a name the calling file defines
itself reaches that definition only (a vendored DDP launcher's `setup_dist(rank)` is its own def, not the utils
module's same-named one); an imported name still reaches the other file's. Code written afresh in the shape of a vendored
inference CLI, not copied."""
from __future__ import annotations

from tests.static_snippets import line_of as _line, write_tree, findings_on_line

PACK_INIT = """\
    from .nodes import DynamiCrafterI2V

    NODE_CLASS_MAPPINGS = {"DynamiCrafterI2V": DynamiCrafterI2V}
"""

NODES = """\
    import comfy.model_management as mm

    from .scripts.evaluation.funcs import load_model_checkpoint


    class DynamiCrafterI2V:
        FUNCTION = "process"

        def process(self, model, ckpt):
            return (load_model_checkpoint(model, ckpt).to(mm.get_torch_device()),)
"""

FUNCS = """\
    import torch


    def load_model_checkpoint(model, ckpt):
        model.load_state_dict(torch.load(ckpt, map_location="cpu")["state_dict"])
        return model
"""

CLI = """\
    import argparse

    import torch

    {imports}


    def run_inference(args):
        sampler = DDIMSampler(instantiate_from_config(args.config))
        videos = torch.stack(args.videos, dim=0).to("cuda")
        return sampler.sample(videos)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--config", type=str)
        run_inference(parser.parse_args())
"""

RELATIVE = ("from ...lvdm.models.samplers.ddim import DDIMSampler\n"
            "    from ...utils.utils import instantiate_from_config")
ABSOLUTE = ("from lvdm.models.samplers.ddim import DDIMSampler\n"
            "    from utils.utils import instantiate_from_config")


# a node that runs the CLI as a script (t18e: a `__main__` block reaches only in a file the pack launches)
LAUNCH = """\


    def run_cli(config):
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "scripts/evaluation/inference.py"),
                        "--config", config], check=True)
"""


def _cli_findings(tmp_path, imports: str) -> set[tuple[str, str, str]]:
    cli = CLI.format(imports=imports)
    nodes = "    import os\n    import subprocess\n    import sys\n" + NODES + LAUNCH
    root = write_tree(tmp_path / "pack", {
        "__init__.py": PACK_INIT, "nodes.py": nodes, "scripts/__init__.py": "",
        "scripts/evaluation/__init__.py": "", "scripts/evaluation/funcs.py": FUNCS,
        "scripts/evaluation/inference.py": cli})
    line = _line(cli, '.to("cuda")')
    return findings_on_line(root, "scripts/evaluation/inference.py", line)


def test_a_main_block_behind_relative_imports_reaches_nothing(tmp_path):
    found = _cli_findings(tmp_path, RELATIVE)
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found


def test_a_launched_main_block_with_absolute_imports_still_reaches(tmp_path):
    found = _cli_findings(tmp_path, ABSOLUTE)
    assert any(sev == "error" for _, sev, _ in found), found


UTILS = """\
    import torch
    import torch.distributed as dist


    def instantiate_from_config(config):
        return config


    def setup_dist(args):
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
"""

LAUNCHER = """\
    import argparse

    import torch
    import torch.distributed as dist
    {imports}

    def setup_dist(local_rank):
        torch.cuda.set_device(local_rank)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)
        setup_dist(parser.parse_args().local_rank)
"""


def _utils_findings(tmp_path, imports: str, main_block: bool = True) -> set[tuple[str, str, str]]:
    launcher = LAUNCHER.format(imports=imports)
    if not main_block:      # a module, not a script nothing imports (whose module-level code is unreached: t19a)
        launcher = launcher.split("\n\n\n    if __name__")[0] + "\n"
    root = write_tree(tmp_path / "pack", {
        "__init__.py": PACK_INIT, "nodes.py": NODES.replace("scripts.evaluation.funcs", "utils.utils").replace(
            "load_model_checkpoint", "instantiate_from_config")
        # the pack runs the launcher (a file nothing imports or launches loads nothing at all: t19d)
        + '\n    DDP_LAUNCHER = ["python", "scripts/ddp_wrapper.py"]\n',
        "utils/__init__.py": "", "utils/utils.py": UTILS,
        "scripts/ddp_wrapper.py": launcher})
    line = _line(UTILS, "torch.cuda.set_device(args.local_rank)")
    return findings_on_line(root, "utils/utils.py", line)


def test_a_bare_call_reaches_the_own_files_definition(tmp_path):
    found = _utils_findings(tmp_path, "")
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found


def test_an_imported_name_reaches_the_other_files_definition(tmp_path):
    found = _utils_findings(tmp_path, "from utils.utils import setup_dist as setup_dist_utils\n    setup_dist_utils",
                            main_block=False)
    assert any(sev == "error" for _, sev, _ in found), found
