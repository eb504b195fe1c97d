"""Project-file families found by mining repositories in no bench split (issue 15, m15): each test is a
realistic snippet with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return sorted((f.line, f.code) for f in result.findings)


def test_notebook_cell_uses_torch_imported_in_an_earlier_cell():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch\nfrom apex import amp\nimport numpy as np"),
                nbformat.v4.new_markdown_cell("torch.cuda.synchronize() in prose"),
                nbformat.v4.new_code_cell("def profile_model(fn):\n    torch.cuda.reset_peak_memory_stats()\n"
                                          "    torch.cuda.synchronize()\n    return np.mean(fn())"),
                nbformat.v4.new_code_cell("model, opt = amp.initialize(model, opt)")]
    result = ENGINE.analyze_bytes(nbformat.writes(nb).encode(), "profile.ipynb")
    assert result.error is None
    got = {(f.line, f.code, f.data["cell"], f.data["cell_line"]) for f in result.findings}
    assert {(5, "NPU002", 3, 2), (6, "NPU002", 3, 3)} <= got
    assert any(line == 8 and cell == 4 for line, _, cell, _ in got)       # amp.initialize, apex imported in cell 1
    # the earlier cells' imports are reported once, in their own cell
    assert [f.code for f in result.findings if f.line == 2] == ["NPU300"]
    assert not any(cell == 3 and cell_line == 0 for _, _, cell, cell_line in got)


def test_ci_steps_each_their_own_script_and_python_steps_through_the_python_pass():
    workflow = """\
        runs:
          using: composite
          steps:
          - shell: python
            run: |
              import os, torch
              TORCH_CUDA_DEFAULT = "128"  # an unmatched " quote in bash
              print(torch.cuda.is_available())
          - shell: bash -l {0}
            run: |
              $PY -m pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu128
              which nvcc
          - shell: pwsh
            run: Write-Host "nvidia-smi"
          - run: |
              echo "$PY -m pip install xformers"
              PIP=${PIP:-pip3}
              $PIP install flash-attn --no-build-isolation
        """
    got = found(".github/actions/setup-env/action.yml", workflow)
    lines = {line for line, _ in got}
    assert 8 in lines                                   # torch.cuda.is_available() in the python step
    assert {(11, "NPU018"), (11, "NPU011"), (12, "NPU017"), (18, "NPU361")} <= set(got)
    assert not lines & {7, 14, 16}                      # python source is not bash; pwsh step; echo text
