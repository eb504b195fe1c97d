"""A node pack's hand-run smoke scripts (pd56, session 32; heldout35's ComfyUI_VLM_nodes tests/manual_*_smoke.py):
ComfyUI runs none of them, their usage text naming the script launches nothing, and a bare name or word of the pack
(`revision="main"`) does not reach a test's `main`. Their findings are info (unreached); a smoke script another file
of the pack runs, and a pack module's own `main`, keep theirs."""
from __future__ import annotations

from tests.test_precision_pd18 import _at, _unreached

SMOKE = '''\
    """Opt-in real-weight smoke test, excluded from pytest. Run one checkpoint per process:

        python tests/manual_model_smoke.py --model "Qwen 3.5 2B"
    """
    import argparse
    import json

    import torch


    def main() -> int:
        parser = argparse.ArgumentParser()
        parser.add_argument("--model", default="Qwen 3.5 2B")
        args = parser.parse_args()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
            free_before, total = torch.cuda.mem_get_info()
        else:
            free_before = total = 0
        print(json.dumps({"model": args.model, "free": free_before, "total": total}))
        return 0


    if __name__ == "__main__":
        raise SystemExit(main())
'''

INSTALL = '''\
    import subprocess
    import sys

    subprocess.run([sys.executable, "tests/manual_model_smoke.py", "--model", "tiny"], check=False)
'''

LOADER = '''\
    import torch


    def main(path):
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return path
'''


CI = """\
    name: ci
    on:
      push:
        branches: [main]
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
          - run: python -m pytest -q tests
"""


# the pack loads its model modules by a computed name, so every module may be loaded (no file is unloaded)
REGISTRY = """\
    import importlib

    for name in ("qwen", "moondream"):
        importlib.import_module(f".models.{name}", __package__)
"""


def test_hand_run_smoke_script_is_unreached(tmp_path):
    # the CI workflow's `branches: [main]` and the node's `revision="main"` are words, not calls of the test's main
    found = _at(tmp_path, {"tests/manual_model_smoke.py": SMOKE, ".github/workflows/ci.yml": CI,
                           "registry.py": REGISTRY}, "tests/manual_model_smoke.py",
                "if torch.cuda.is_available()", imports="from . import registry",
                call='x = self.load(x, revision="main")')
    assert _unreached(found)


def test_smoke_script_the_pack_runs_keeps_its_finding(tmp_path):
    # control: install.py (ComfyUI-Manager runs it) launches the script
    found = _at(tmp_path, {"tests/manual_model_smoke.py": SMOKE, "install.py": INSTALL, "registry.py": REGISTRY},
                "tests/manual_model_smoke.py", "if torch.cuda.is_available()", imports="from . import registry")
    assert not _unreached(found)


def test_pack_module_main_named_by_a_word_keeps_its_finding(tmp_path):
    # control: a pack module's own `main`, named by the node (`from .loader import main`), is reached
    found = _at(tmp_path, {"loader.py": LOADER}, "loader.py", "if torch.cuda.is_available()",
                imports="from .loader import main", call="x = main(x)")
    assert not _unreached(found)
