"""Launch lines of scripts that fail at import on Ascend (s15e, issue 15): a small tree written the way LGM and
FastChat-style projects are (a training script importing the project's renderer, which imports a CUDA rasteriser
extension; an inference script importing flash_attn at module level), with launches that must and must not be
reported."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "splat"
    _write(root, "core/__init__.py", "")
    _write(root, "core/gs.py", """\
        import numpy as np
        import torch

        from diff_gaussian_rasterization import (
            GaussianRasterizationSettings,
            GaussianRasterizer,
        )

        from core.options import Options


        class GaussianRenderer:
            def __init__(self, opt: Options):
                self.opt = opt
                self.bg_color = torch.tensor([1, 1, 1], dtype=torch.float32)

            def render(self, gaussians, cam):
                settings = GaussianRasterizationSettings(image_height=self.opt.size, image_width=self.opt.size,
                                                         bg=self.bg_color)
                return GaussianRasterizer(raster_settings=settings)(means3D=gaussians[..., :3])
        """)
    _write(root, "core/options.py", """\
        from dataclasses import dataclass


        @dataclass
        class Options:
            size: int = 256
        """)
    _write(root, "core/models.py", """\
        import torch.nn as nn

        from core.options import Options
        from core.gs import GaussianRenderer


        class Model(nn.Module):
            def __init__(self, opt: Options):
                super().__init__()
                self.renderer = GaussianRenderer(opt)
        """)
    _write(root, "main.py", """\
        import tyro
        import torch
        from core.options import Options
        from core.models import Model


        def main():
            opt = tyro.cli(Options)
            model = Model(opt)
            torch.save(model.state_dict(), "model.pt")


        if __name__ == "__main__":
            main()
        """)
    steps = "".join(f"    x = layer_{i}(x)\n" for i in range(32))     # a real script, not a 30-line wrapper (NPU312)
    (root / "chat.py").write_text(
        "import torch\nfrom flash_attn import flash_attn_func\n\n\n"
        "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n\n\n"
        f"def forward(x):\n{steps}    return x\n")
    _write(root, "chat_guarded.py", """\
        import torch

        try:
            from flash_attn import flash_attn_func
        except ImportError:
            flash_attn_func = None


        def attend(q, k, v):
            if flash_attn_func is None:
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return flash_attn_func(q, k, v, causal=True)
        """)
    _write(root, "export.py", """\
        import torch


        def export(path):
            from core.gs import GaussianRenderer      # only when exporting: the launch itself imports nothing CUDA-only
            return GaussianRenderer
        """)
    _write(root, "scripts/examples.sh", """\
        # training
        accelerate launch --config_file acc_configs/gpu8.yaml main.py --workspace workspace
        # python main.py --help
        python chat.py --prompt "hello"
        python chat_guarded.py --prompt "hello"
        python export.py --out model.ply
        python -m core.models
        """)
    return root


def test_a_launch_whose_script_imports_a_cuda_only_package_at_module_level_is_reported(tmp_path):
    from auditor.runner import run_static

    run = run_static([_tree(tmp_path)], jobs=1)
    got = {(f.line, f.code): f for r in run.results if r.path.endswith("examples.sh") for f in r.findings
           if f.code in ("NPU827", "NPU828")}
    # main.py through two modules of the tree; chat.py directly; not the comment, not the guarded import, not an
    # import inside a function; `python -m core.models` runs core/models.py, which reaches the rasteriser (t17a)
    assert set(got) == {(2, "NPU827"), (4, "NPU828"), (7, "NPU827")}, got
    kernel = got[(2, "NPU827")]
    assert kernel.category == "kernel" and kernel.severity == "error"
    assert "main.py:4 `core.models` -> core/models.py:4 `core.gs` -> core/gs.py:4" in kernel.message, kernel.message
    assert got[(4, "NPU828")].category == "attention" and "chat.py:2" in got[(4, "NPU828")].message


def test_the_rasterizer_import_is_a_kernel_error_of_its_own():
    assert (4, "NPU826") in line_codes(ENGINE, "core/gs.py", (_source := textwrap.dedent("""\
        import torch

        # the CUDA rasteriser of 3D Gaussian Splatting
        from diff_gaussian_rasterization import GaussianRasterizer
        """)))
    assert not [c for _, c in line_codes(ENGINE, "render.py", "from gaussian_renderer import render\n")
                if c == "NPU826"], _source


def test_import_failure_facts_keep_only_unconditional_imports():
    import ast

    from auditor.project.launch_imports import import_failure_facts

    text = textwrap.dedent("""\
        import os
        import torch
        from . import utils
        from core.gs import GaussianRenderer
        if torch.cuda.is_available():
            import flash_attn
        try:
            import xformers.ops
        except ImportError:
            pass
        """)
    facts = import_failure_facts(ast.parse(text), [])
    assert facts == {"imports": [[3, "", 1, ["utils"]], [4, "core.gs", 0, ["GaussianRenderer"]]]}, facts


def test_a_warm_run_reports_the_same_launches_and_reads_no_python_file(tmp_path, monkeypatch):
    from auditor.runner import run_static
    from tests.test_tree_facts import _refuse_python_reads

    root = _tree(tmp_path)
    cache = tmp_path / "cache"

    def launches(run) -> list:
        return sorted((r.path, f.line, f.code, f.message) for r in run.results for f in r.findings
                      if f.code in ("NPU827", "NPU828"))
    cold = run_static([root], jobs=1, cache_dir=cache)
    _refuse_python_reads(monkeypatch)       # the chain is followed from the cached facts (`hard`) alone
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert launches(warm) == launches(cold) and len(launches(cold)) == 3     # with `python -m core.models` (t17a)
