"""Asserts on the mocked CUDA arm of a test (t33c, session 33; heldout35's anemoi-inference `tests/unit/test_clusters.py`):
`with patch("anemoi.inference.lazy.torch.cuda.is_available", return_value=True): ... assert client.backend == "nccl"`
checks the answer the code gives where CUDA is present; the probe is patched where the module under test imports
torch, and nothing selects a backend on the machine that runs the test."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import findings_by_line, line_of

MOCKED = """\
    from unittest.mock import patch

    from anemoi.inference.clusters.manual import ManualClient


    class TestManualClient:
        def test_cluster_backend_cuda(self, mock_context):
            with patch("anemoi.inference.lazy.torch.cuda.is_available", return_value=True):
                client = ManualClient(world_size=4, local_rank=0, global_rank=0, master_addr="localhost",
                                      master_port=12345)
                assert client.backend == "nccl"

        def test_cluster_backend_cpu(self):
            with patch("anemoi.inference.lazy.torch.cuda.is_available", return_value=False):
                client = ManualClient(world_size=4, local_rank=0, global_rank=0, master_addr="localhost",
                                      master_port=12345)
                assert client.backend == "gloo"
    """

# controls: no patch (the assert checks the real machine's answer); a patched test that starts NCCL itself
UNPATCHED = """\
    import torch
    import torch.distributed as dist

    from anemoi.inference.clusters.manual import ManualClient


    def test_cluster_backend_on_this_machine():
        client = ManualClient(world_size=1, local_rank=0, global_rank=0, master_addr="localhost", master_port=1)
        assert client.backend == "nccl"


    def test_process_group(monkeypatch):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        dist.init_process_group("nccl", rank=0, world_size=1)
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _severity(engine, src: str, needle: str, rel: str = "tests/unit/test_clusters.py") -> str | None:
    found = [f for f in findings_by_line(engine, src, rel).get(line_of(src, needle), []) if f.code == "NPU101"]
    return found[0].severity if found else None


def test_an_assert_under_a_patched_probe_is_info(engine):
    assert _severity(engine, MOCKED, 'assert client.backend == "nccl"') == "info"


def test_unpatched_or_acting_lines_keep_their_severity(engine):
    assert _severity(engine, UNPATCHED, 'assert client.backend == "nccl"', "tests/test_backend.py") not in (None, "info")
    assert _severity(engine, UNPATCHED, 'init_process_group("nccl"', "tests/test_backend.py") not in (None, "info")
