"""A device string set on an attribute of a test double (pd56, session 32; heldout35's anemoi-inference
tests/unit/test_clusters.py: `context = MagicMock(spec=Context)` ... `context.device.type = "cuda"`, and
`mock_context.device.type = "cuda"` on the fixture): the mock's data, no device is selected. The same value set on a
real object keeps its finding."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of, severities_at, write_tree

TESTS = """\
    from unittest.mock import MagicMock

    import pytest
    import torch

    from anemoi.inference.context import Context
    from anemoi.inference.runners.default import DefaultRunner


    @pytest.fixture
    def mock_context():
        context = MagicMock(spec=Context)
        context.device = MagicMock()
        context.device.type = "cuda"
        return context


    def test_cluster_backend_cuda(mock_context):
        mock_context.device.type = "cuda"
        assert mock_context.device.type


    def test_runner_device():
        runner = DefaultRunner.from_config({"device": "cpu"})
        runner.device = "cuda"
        assert runner.predict_step(torch.zeros(2)) is not None
"""


def test_device_strings_set_on_mocks_are_data(tmp_path):
    root = write_tree(tmp_path / "anemoi", {"tests/unit/test_clusters.py": TESTS})
    run = run_static([root], jobs=1)
    lines = {f.line for r in run.results for f in r.findings if f.code == "NPU003"}
    assert line_of(TESTS, '    context.device.type = "cuda"') not in lines
    assert line_of(TESTS, 'mock_context.device.type = "cuda"') not in lines


def test_device_string_set_on_a_real_object_keeps_its_finding(tmp_path):
    root = write_tree(tmp_path / "anemoi", {"tests/unit/test_clusters.py": TESTS})
    found = severities_at(root, "tests/unit/test_clusters.py", TESTS, 'runner.device = "cuda"')
    assert any(s in ("error", "warning") for s, _ in found)
