"""Session 56's review mends (lead56): one reader per fact, each tested on code shaped like real trees'."""
from __future__ import annotations

import ast
import textwrap

from auditor.static import cpu_bindings


def _tree(src: str) -> ast.Module:
    return ast.parse(textwrap.dedent(src))


def test_cpu_fallback_builds_reads_factories_named_after_the_builders():
    # tensorlayerx-style factories bound in a CUDA / CPU choice are one builder, as torch's own names are
    tree = _tree("""
        from tlx_build import PyCUDAExtension, PyCppExtension
        if WITH_CUDA:
            build_extension = PyCUDAExtension
        else:
            build_extension = PyCppExtension
        ext = build_extension(name="tlx_ops._C", sources=["ops.cpp"])
    """)
    assert cpu_bindings.cpu_fallback_builds(tree) == {"tlx_ops._C": 7}


def test_cpu_fallback_builds_needs_both_arms():
    tree = _tree("""
        from torch.utils.cpp_extension import CUDAExtension
        build_extension = CUDAExtension
        ext = build_extension(name="warpctc_pytorch._warp_ctc", sources=["binding.cpp"])
    """)
    assert cpu_bindings.cpu_fallback_builds(tree) == {}


def test_cuda_arm_spans_read_the_same_builder_names():
    tree = _tree("""
        import os
        WITH_CUDA = os.system("nvcc --version") == 0
        cuda_macro = ("COMPILE_WITH_CUDA", True)
        if not WITH_CUDA:
            ext = PyCppExtension("ggl.ops", ["ops.cpp"])
        else:
            ext = PyCUDAExtension("ggl.ops", ["ops.cu"], define_macros=[cuda_macro])
    """)
    assert cpu_bindings.cuda_arm_spans(tree) == [[8, 8], [4, 4]]


def test_each_readme_is_read_once_per_run(tmp_path):
    # review55 item 3: the root README's facts, its linked folder's commands and a folder's named scripts share one
    # read of each README file (Panda-70M's root README links `captioning/`, whose README runs `inference.py`)
    from types import SimpleNamespace

    from auditor.static import unreached_defs

    (tmp_path / "captioning").mkdir()
    (tmp_path / "README.md").write_text("See [Captioning](./captioning).\n```\npython train.py\n```\n")
    (tmp_path / "captioning" / "README.md").write_text("cd Panda-70M/captioning\npython inference.py --video a.mp4\n")
    (tmp_path / "captioning" / "README_zh.md").write_text("python demo_zh.py\n")
    (tmp_path / "captioning" / "inference.py").write_text("import torch\n")
    project = SimpleNamespace(paths={"captioning/inference.py": str(tmp_path / "captioning" / "inference.py")},
                              reads=0)
    facts = unreached_defs._readme_facts(project)
    assert facts["linked"] == {"captioning/inference"} and "train" in facts["launches"]
    assert project.reads == 2                           # the root README and the linked folder's README.md
    assert unreached_defs._readme_names(project, "captioning", "inference.py")
    assert unreached_defs._readme_names(project, "captioning", "demo_zh.py")
    assert not unreached_defs._readme_names(project, "captioning", "train.py")
    assert project.reads == 3                           # README_zh.md, once; README.md was held
    unreached_defs._readme_facts(project)
    unreached_defs._readme_names(project, "captioning", "inference.py")
    assert project.reads == 3


def test_a_package_version_is_in_its_init_summary():
    # review55 item 4: descript's audiotools copy binds `__version__ = "0.7.3"`; the worker's summary holds it, so the
    # versioned-copy reading neither stats nor reads the file again
    from auditor.static.crossfile import RELEASE_VERSION, summarize

    src = '__version__ = "0.7.3"\nfrom .core import AudioSignal\n'
    assert summarize(ast.parse(src), [], "audiotools/__init__.py", src)[RELEASE_VERSION] == "0.7.3"
    assert RELEASE_VERSION not in summarize(ast.parse(src), [], "audiotools/version.py", src)
    assert RELEASE_VERSION not in summarize(ast.parse(""), [], "audiotools/core/__init__.py", "")
