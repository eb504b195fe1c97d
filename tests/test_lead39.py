"""Lead, session 39: a message that shows a precision setting through its getter reads it for a human (as t14z's
attribute reads in messages do); the getter in a condition, the setter, and a CUDA call in a message (lead decision 48)
keep their findings. Shaped on an autoregressive image model's argument helper that prints its TF32 state."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import code_severity_by_line

ENGINE = StaticEngine(load_rules())

ARG_UTIL = b"""import logging

import torch

logger = logging.getLogger(__name__)


class Args:
    @staticmethod
    def set_tf32(tf32: bool):
        if torch.cuda.is_available():
            torch.set_float32_matmul_precision('high' if tf32 else 'highest')
            print(f'[tf32] [precis] torch.get_float32_matmul_precision(): {torch.get_float32_matmul_precision()}')
            logger.info("matmul precision: %s", torch.get_float32_matmul_precision())
        if torch.get_float32_matmul_precision() == "highest":
            torch.set_float32_matmul_precision("high")
        print(f"running on {torch.cuda.get_device_name(0)}")
"""


def test_a_precision_getter_shown_in_a_message_is_a_read():
    found = code_severity_by_line(ENGINE, ARG_UTIL, "utils/arg_util.py")
    assert "NPU207" in found.get(12, {})                      # the setter
    assert not found.get(13) and not found.get(14)            # print / logger showing the getter's answer
    assert "NPU207" in found.get(15, {})                      # the getter deciding a branch
    assert found.get(17)                                      # a CUDA call in a message: decision 48


def test_a_compiled_extension_of_the_projects_own_package_stays_in_a_tree_audit(tmp_path):
    """mermaid's samplers import `my_lib_1D` from `mermaid.libraries._ext`, a folder its build fills with compiled
    modules: the tree has the `mermaid` package but no `_ext` Python module, so the whole-tree audit keeps the per-file
    reading (NPU891); a `_ext` that is a Python module of the tree is the project's own code and goes."""
    from tests.static_snippets import code_severity_in_tree

    sampler = ("import torch\nfrom mermaid.libraries._ext import my_lib_1D\n\n\n"
               "def forward(input1, input2, output):\n"
               "    my_lib_1D.BilinearSamplerBCW_updateOutput_cuda_1D(input1, input2, output, 0, True)\n"
               "    return output\n")
    files = {"mermaid/__init__.py": "", "mermaid/libraries/__init__.py": "",
             "mermaid/libraries/functions/__init__.py": "", "mermaid/libraries/functions/stn_nd.py": sampler}
    found = code_severity_in_tree(tmp_path / "built", files)
    assert "NPU891" in found.get(("mermaid/libraries/functions/stn_nd.py", 2), {})
    python = dict(files, **{"mermaid/libraries/_ext/__init__.py": "", "mermaid/libraries/_ext/my_lib_1D.py": "X = 1\n"})
    found = code_severity_in_tree(tmp_path / "python", python)
    assert "NPU891" not in found.get(("mermaid/libraries/functions/stn_nd.py", 2), {})


def test_a_gpu_compose_file_beside_the_plain_one_is_the_cuda_member_of_a_pair(tmp_path):
    """vits-simple-api ships `docker-compose.yaml` (CPU image) and `docker-compose-gpu.yaml` (the `latest-gpu` image
    and an NVIDIA device reservation): the user picks one by host, so the GPU file is the CUDA member of a per-backend
    pair (info, with the sibling named), as `requirements-gpu.txt` beside `requirements-cpu.txt` is; a GPU compose
    file with no plain sibling keeps its severities."""
    from auditor.runner import run_static

    cpu = ("services:\n  vits:\n    image: artrajz/vits-simple-api:latest\n    ports:\n      - 23456:23456\n")
    gpu = ("services:\n  vits:\n    image: artrajz/vits-simple-api:latest-gpu\n    ports:\n      - 23456:23456\n"
           "    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n"
           "              count: all\n              capabilities: [gpu]\n")

    def severities(root):
        out: dict[int, set[str]] = {}
        for r in run_static([root], jobs=1, respect_gitignore=False, cache_dir=root / ".cache").results:
            if r.path.endswith("docker-compose-gpu.yaml"):
                for f in r.findings:
                    out.setdefault(f.line, set()).add(f.severity)
        return out

    pair = tmp_path / "pair"
    pair.mkdir()
    (pair / "docker-compose.yaml").write_text(cpu)
    (pair / "docker-compose-gpu.yaml").write_text(gpu)
    found = severities(pair)
    assert found and all(sev == {"info"} for sev in found.values()), found
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "docker-compose-gpu.yaml").write_text(gpu)
    assert "error" in set().union(*severities(alone).values())
