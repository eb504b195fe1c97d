"""Precision fixes of t18d (session 18, tuned on bench/precision/tuned_t18d): two narrowings of unreached_defs in a
ComfyUI node pack, each with a control.

- A `from x import name` whose name the importing file never reads reaches nothing: Geowizard's pipeline imports
  `find_batch_size` at module level and sizes its batches itself, so the helper's CUDA gate is info (context
  `unreached`), not an error. The same import used by a call still reaches it, and a package's `__init__.py` that
  imports a name re-exports it (still reached).
- The own lines of an `if __name__ == "__main__":` block in a file with a module-level package-relative import
  never run (the import raises ImportError first when the file runs as a script; pd9 said so of what the block
  calls): APISR's `grl.py` self-test `.cuda()` lines are info `unreached`. With absolute imports the block runs
  (`python architecture/swinir.py`) and its `.cuda()` stays an error.

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from tests.static_snippets import line_of as _line, write_tree, findings_on_line

PACK_INIT = """\
    from .nodes import DepthNormalNode

    NODE_CLASS_MAPPINGS = {"DepthNormalNode": DepthNormalNode}
"""

NODES = """\
    import comfy.model_management as mm

    from .pipeline import estimate


    class DepthNormalNode:
        FUNCTION = "process"

        def process(self, image, batch_size):
            return (estimate(image.to(mm.get_torch_device()), batch_size),)
"""

PIPELINE = """\
    import torch

    from .utils.batch_size import pick_batch_size


    def estimate(image, batch_size):
        {body}
        return torch.stack([image] * bs)
"""

BATCH_SIZE = """\
    import torch


    def pick_batch_size(ensemble_size, dtype):
        if not torch.cuda.is_available():
            return 1
        total_vram = torch.cuda.mem_get_info()[1] / 1024.0**3
        return max(1, int(total_vram // ensemble_size))
"""

UNUSED = "bs = batch_size if batch_size > 0 else 1"
USED = "bs = batch_size if batch_size > 0 else pick_batch_size(4, image.dtype)"


def _helper_findings(tmp_path, files: dict[str, str]) -> set[tuple[str, str, str]]:
    root = write_tree(tmp_path / "pack", files)
    line = _line(BATCH_SIZE, "torch.cuda.is_available()")
    return findings_on_line(root, "utils/batch_size.py", line)


def _pack(body: str) -> dict[str, str]:
    return {"__init__.py": PACK_INIT, "nodes.py": NODES, "pipeline.py": PIPELINE.format(body=body),
            "utils/__init__.py": "", "utils/batch_size.py": BATCH_SIZE}


def test_an_imported_name_the_file_never_reads_reaches_nothing(tmp_path):
    found = _helper_findings(tmp_path, _pack(UNUSED))
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found


def test_an_imported_name_the_file_calls_still_reaches(tmp_path):
    found = _helper_findings(tmp_path, _pack(USED))
    assert any(sev == "error" for _, sev, _ in found), found


def test_a_package_init_re_exports_what_it_imports(tmp_path):
    # utils/__init__.py re-exports the helper and the pipeline takes it from the package: reached
    files = _pack(USED)
    files["utils/__init__.py"] = "from .batch_size import pick_batch_size\n"
    files["pipeline.py"] = files["pipeline.py"].replace("from .utils.batch_size import", "from .utils import")
    found = _helper_findings(tmp_path, files)
    assert any(sev == "error" for _, sev, _ in found), found


ARCH = """\
    import torch
    import torch.nn as nn
    {imports}


    class SuperResolution(nn.Module):
        def __init__(self, scale=4):
            super().__init__()
            self.body = nn.Conv2d(3, 3 * scale * scale, 3, padding=1)
            self.up = nn.PixelShuffle(scale)

        def forward(self, x):
            return self.up(self.body(x))


    if __name__ == "__main__":
        model = SuperResolution(scale=4).cuda()
        x = torch.randn((1, 3, 180, 180)).cuda()
        print(model(x).shape)
"""

ARCH_NODES = """\
    import comfy.model_management as mm

    from .architecture.sr import SuperResolution


    class Upscale:
        FUNCTION = "upscale"

        def upscale(self, image):
            return (SuperResolution().to(mm.get_torch_device())(image),)
"""


def _main_block_findings(tmp_path, imports: str, launch: bool = False) -> set[tuple[str, str, str]]:
    arch = ARCH.format(imports=imports)
    nodes = ARCH_NODES + ('\n\n    def smoke_test():\n        import subprocess, sys\n'
                          '        subprocess.run([sys.executable, "architecture/sr.py"])\n' if launch else "")
    root = write_tree(tmp_path / "pack", {
        "__init__.py": PACK_INIT.replace("DepthNormalNode", "Upscale"), "nodes.py": nodes,
        "architecture/__init__.py": "", "architecture/common.py": "def to_2tuple(x):\n    return (x, x)\n",
        "architecture/sr.py": arch})
    lines = {_line(arch, "SuperResolution(scale=4).cuda()"), _line(arch, "torch.randn((1, 3, 180, 180)).cuda()")}
    return findings_on_line(root, "architecture/sr.py", lines)


def test_a_main_block_behind_relative_imports_is_unreached_itself(tmp_path):
    found = _main_block_findings(tmp_path, "from .common import to_2tuple")
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found


def test_a_main_block_with_absolute_imports_keeps_its_error(tmp_path):
    # t19d: only when the pack runs the file as a script (a string names it); a block nothing launches is
    # unreached whatever its imports (tests/test_precision_t19d.py)
    found = _main_block_findings(tmp_path, "from timm.models.layers import to_2tuple", launch=True)
    assert any(sev == "error" for _, sev, _ in found), found


def test_a_main_block_nothing_launches_is_unreached_whatever_its_imports(tmp_path):
    found = _main_block_findings(tmp_path, "from timm.models.layers import to_2tuple")
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found
