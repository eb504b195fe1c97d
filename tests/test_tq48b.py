"""Precision fixes of tq48b (session 48, tuned on heldout58's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at


# -- a CUDA-named test marker the suite's own configuration deselects without CUDA -----------------------------------

TEST_QUANT = """\
    import pytest
    import torch

    from quantlib.sim import QuantSim


    class TestQuantSim:
        def test_cpu(self):
            sim = QuantSim(torch.nn.Linear(4, 4))
            assert sim.compute(torch.ones(2, 4)).shape == (2, 4)

        @pytest.mark.cuda
        def test_gpu_inputs(self):
            sim = QuantSim(torch.nn.Linear(4, 4).cuda())
            sim.compute(torch.ones(2, 4).to("cuda:0"))

        @pytest.mark.cuda()
        @pytest.mark.parametrize("device", [torch.device("cpu"), torch.device("cuda:0")])
        def test_devices(self, device):
            QuantSim(torch.nn.Linear(4, 4)).compute(torch.ones(2, 4, device=device))
"""

CMAKE = """\
    if (ENABLE_CUDA)
        add_test(QuantTests ${Python3_EXECUTABLE} -m pytest ${CMAKE_CURRENT_SOURCE_DIR} --junitxml=out.xml)
    else (ENABLE_CUDA)
        add_test(QuantTests ${Python3_EXECUTABLE} -m pytest ${CMAKE_CURRENT_SOURCE_DIR} -m "not cuda" --junitxml=out.xml)
    endif (ENABLE_CUDA)
"""

CMAKE_VARIABLE = """\
    if (ENABLE_CUDA)
        set(CUDA_FLAG "not blah")
    else (ENABLE_CUDA)
        set(CUDA_FLAG "not cuda")
    endif (ENABLE_CUDA)
    add_custom_target(Acceptance VERBATIM COMMAND ${Python3_EXECUTABLE} -m pytest -s ${CMAKE_CURRENT_SOURCE_DIR} -m ${CUDA_FLAG})
"""

CONFTEST = """\
    import pytest
    import torch


    def pytest_collection_modifyitems(config, items):
        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="needs CUDA")
            for item in items:
                if "cuda" in item.keywords:
                    item.add_marker(skip)
"""

LIB = """\
    class QuantSim:
        def __init__(self, model):
            self.model = model

        def compute(self, x):
            return self.model(x)
"""


def _severities(found: dict, rel: str = "tests/test_quant.py") -> tuple[str | None, str | None, str | None]:
    return (severity_at(found, rel, TEST_QUANT, "Linear(4, 4).cuda()").get("NPU001"),
            severity_at(found, rel, TEST_QUANT, 'to("cuda:0")').get("NPU003"),
            severity_at(found, rel, TEST_QUANT, 'torch.device("cuda:0")]').get("NPU003"))


def test_cuda_marker_deselected_by_cmake_is_a_skip_guard(tmp_path):
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     "tests/test_quant.py": TEST_QUANT, "tests/CMakeLists.txt": CMAKE})
    assert _severities(found) == ("warning", "warning", "warning")


def test_cuda_marker_deselected_through_a_cmake_variable(tmp_path):
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     "nightly/test_quant.py": TEST_QUANT, "nightly/CMakeLists.txt": CMAKE_VARIABLE})
    assert _severities(found, "nightly/test_quant.py") == ("warning", "warning", "warning")


def test_cuda_marker_skipped_by_a_conftest_hook(tmp_path):
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     "tests/test_quant.py": TEST_QUANT, "tests/conftest.py": CONFTEST})
    assert _severities(found) == ("warning", "warning", "warning")


def test_cuda_marker_nothing_wires_keeps_its_errors(tmp_path):
    # a marker declared in pytest.ini but never deselected: `pytest` runs the test on Ascend as written
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     "tests/test_quant.py": TEST_QUANT,
                                     "tests/CMakeLists.txt": CMAKE.replace('-m "not cuda" ', '-m "not slow" ')})
    assert _severities(found) == ("error", "error", "error")
