"""t17g (issue 14, session 17, misses across the earlier static splits fixed as families).

A call rule whose condition is one argument (`when: arg`) and `extra: {at_arg: true}` reports that argument's line:
PyG's extension packages (torch-cluster, torch-sparse, torch-scatter) spell the look-up of their compiled CUDA
library over two lines, `find_spec(` and then `f'{library}_cuda', [...]`; the second names the CUDA module."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

ENGINE = StaticEngine(load_rules(), product="a2")


def by_line(src: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in snippet_findings(ENGINE, src, "__init__.py"):
        out.setdefault(f.line, set()).add(f.code)
    return out


PYG_LOOKUP = '''\
import importlib
import os.path as osp

import torch

for library in ['_version', '_grid', '_graclus', '_fps', '_rw']:
    cuda_spec = importlib.machinery.PathFinder().find_spec(
        f'{library}_cuda', [osp.dirname(__file__)])
    cpu_spec = importlib.machinery.PathFinder().find_spec(
        f'{library}_cpu', [osp.dirname(__file__)])
    spec = cuda_spec or cpu_spec
    if spec is not None:
        torch.ops.load_library(spec.origin)
'''


def test_extension_lookup_reported_on_the_line_naming_the_cuda_module():
    lines = by_line(PYG_LOOKUP)
    assert "NPU368" in lines.get(8, set())
    assert "NPU368" not in lines.get(7, set())        # the callee's line names no CUDA module
    assert not any("NPU368" in codes for line, codes in lines.items() if line in (9, 10))   # the CPU look-up


def test_one_line_lookup_keeps_its_line():
    src = 'import importlib.util\nHAS_SELECTIVE_SCAN = importlib.util.find_spec("selective_scan_cuda") is not None\n'
    assert "NPU368" in by_line(src).get(2, set())
