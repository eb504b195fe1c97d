"""tq58a (session 58; TUNED on heldout77): names of a tree's own plain Python module inside a package named like a
compiled extension (`*_kernels`) are Python, not the extension NPU379 names. Each shape on code like a uv workspace's
kernel package (`packages/x-kernels/src/x_kernels/`), beside controls that keep their finding."""
from __future__ import annotations

from auditor.static.firstparty import in_python_module_file, python_module_files
from tests.static_snippets import dedented_tree, severity_at

# a workspace member's kernel package: a constants module, a CuTe DSL kernel reading it, a compiled extension
_TYPES = '''
import cutlass

NUM_WARPGROUPS = 2
TILE_M = 128
ACC = cutlass.Float32
'''
_KERNEL = '''
import cutlass
import cutlass.cute as cute

from vid_kernels.vae.tile_types import ACC, NUM_WARPGROUPS, TILE_M


@cute.kernel
def fused_block(smem):
    rows = smem.allocate_tensor(cutlass.Int32, cute.make_layout((TILE_M,)), byte_alignment=16)
    for g in cutlass.range_constexpr(NUM_WARPGROUPS):
        rows[g] = ACC(0.0)
'''
# the package's compiled extension (setup.py's CUDAExtension `vid_kernels._blockwise_ext`), re-exported by __init__
_USER = '''
import torch

from vid_kernels import blockwise_quant
from vid_kernels.vae import kernel_ext


def quantize(x: torch.Tensor) -> torch.Tensor:
    return blockwise_quant(x) + kernel_ext.scale(x)
'''
_FILES = {
    "packages/vid-kernels/src/vid_kernels/__init__.py": "from vid_kernels._blockwise_ext import blockwise_quant\n",
    "packages/vid-kernels/src/vid_kernels/vae/__init__.py": "",
    "packages/vid-kernels/src/vid_kernels/vae/tile_types.py": _TYPES,
    "packages/vid-kernels/src/vid_kernels/vae/fused_block.py": _KERNEL,
    "packages/vid-core/src/vid_core/quant.py": _USER,
}


def test_constants_of_an_own_module_in_a_kernels_package_are_no_extension(tmp_path):
    found = dedented_tree(tmp_path, _FILES)
    rel = "packages/vid-kernels/src/vid_kernels/vae/fused_block.py"
    for needle in ("from vid_kernels.vae.tile_types import", "make_layout((TILE_M,))", "range_constexpr(NUM_WARP"):
        assert "NPU379" not in severity_at(found, rel, _KERNEL, needle), needle
    # the CuTe DSL lines keep their own rule
    assert severity_at(found, rel, _KERNEL, "make_layout((TILE_M,))").get("NPU384") == "error"


def test_package_reexports_and_missing_modules_keep_the_extension_finding(tmp_path):
    found = dedented_tree(tmp_path, _FILES)
    rel = "packages/vid-core/src/vid_core/quant.py"
    assert severity_at(found, rel, _USER, "from vid_kernels import blockwise_quant").get("NPU379") == "error"
    assert severity_at(found, rel, _USER, "from vid_kernels.vae import kernel_ext").get("NPU379") == "error"


def test_module_file_names_and_their_reading():
    modules = python_module_files(["packages/a-kernels/src/a_kernels/vae/types.py", "lib/r_kernels/__init__.py",
                                   "tools/quant_cuda.py"])
    assert {"vae.types", "a_kernels.vae.types", "src.a_kernels.vae.types"} <= modules
    assert "types" not in modules and "r_kernels" not in modules and "quant_cuda" not in modules
    assert in_python_module_file("a_kernels.vae.types.M", modules)
    assert in_python_module_file("a_kernels.vae.types", modules)
    # a package `__init__` may re-export compiled submodules (RetroInfer's `from .Copy import *`)
    assert not in_python_module_file("r_kernels.gather_copy", modules)
    # an extension-shaped name below the module file is not the module's own
    assert not in_python_module_file("a_kernels.vae.types.fused_cuda.run", modules)


# a uv workspace of member projects under `packages/`, each laid out as `src/<pkg>` and importing itself by name
_WORKSPACE = '''
[tool.uv.sources]
vid-core = { workspace = true }
vid-kernels = { path = "packages/vid-kernels", editable = true }

[tool.uv.workspace]
members = ["packages/*"]
exclude = ["packages/vid-kernels"]
'''
_LOADER = '''
import torch

from vid_core.quant.util import TRITON_AVAILABLE


def load_model(path, dtype: torch.dtype = torch.bfloat16):
    return torch.load(path, map_location="cpu").to(dtype)


def sync_all():
    torch.cuda.synchronize()
'''
_PIPELINE = '''
import torch

from vid_core.quant.fp8 import fused_add_round


def main():
    return fused_add_round(torch.zeros(2, dtype=torch.bfloat16))


if __name__ == "__main__":
    main()
'''
_MEMBERS = {
    "packages/vid-core/pyproject.toml": '[project]\nname = "vid-core"\nversion = "0.1"\n',
    "packages/vid-core/src/vid_core/__init__.py": "",
    "packages/vid-core/src/vid_core/quant/__init__.py": "",
    "packages/vid-core/src/vid_core/quant/util.py": "import importlib.util\n\nTRITON_AVAILABLE = "
                                                    "importlib.util.find_spec('triton') is not None\n",
    "packages/vid-core/src/vid_core/quant/fp8.py": "from vid_core.quant.util import TRITON_AVAILABLE\n\n\n"
                                                   "def fused_add_round(x):\n    return x if TRITON_AVAILABLE else x\n",
    "packages/vid-core/src/vid_core/loader.py": _LOADER,
    "packages/vid-pipelines/pyproject.toml": '[project]\nname = "vid-pipelines"\nversion = "0.1"\n',
    "packages/vid-pipelines/src/vid_pipelines/__init__.py": "",
    "packages/vid-pipelines/src/vid_pipelines/retake.py": _PIPELINE,
}


def _loader_lines(tmp_path, root_pyproject):
    found = dedented_tree(tmp_path, {**_MEMBERS, "pyproject.toml": root_pyproject})
    rel = "packages/vid-core/src/vid_core/loader.py"
    return severity_at(found, rel, _LOADER, "torch.cuda.synchronize()")


def test_uv_workspace_members_are_the_trees_own_projects(tmp_path):
    # not "a copy of another project's package": uv builds the member from the tree
    assert _loader_lines(tmp_path, _WORKSPACE).get("NPU002") == "error"


def test_member_folders_without_a_workspace_stay_copies(tmp_path):
    assert _loader_lines(tmp_path, '[project]\nname = "vid"\nversion = "0.1"\n').get("NPU002") == "info"


def test_an_excluded_member_is_own_a_bare_path_source_is_not(tmp_path):
    excluded = _WORKSPACE.replace('exclude = ["packages/vid-kernels"]', 'exclude = ["packages/vid-core"]')
    assert _loader_lines(tmp_path, excluded).get("NPU002") == "error"
    # a vendored engine installed from the tree (`{ path = "third_parts/..." }`) is still another project's copy
    only_path = '[tool.uv.sources]\nvid-core = { path = "packages/vid-core", editable = true }\n'
    assert _loader_lines(tmp_path / "p", only_path).get("NPU002") == "info"
