"""Precision fixes of t19d (session 19, tuned on bench/precision/tuned_t19d): in a ComfyUI node pack,
- a module nothing in the pack imports, launches or names (FishSpeech vendors fish-speech's training web UI
  `fish_speech/webui/manage.py`; ComfyUI imports only the pack's root `__init__.py`) runs none of its module-level
  code, and a file only such a module launches (`tools/vqgan/extract_vq.py`) is not run either;
- click's own decorators (`@click.command()`, `@click.option(...)`) register nothing: a click CLI runs only from the
  `__main__` block of a file the pack launches;
- the own lines of a `__main__` block the pack never runs (llama.py's smoke test) are unreached like what it calls.
Their CUDA lines are info (context `unreached`, policy (h)). Controls: a launched CLI keeps its errors, a module a
node imports keeps its module-level errors, and a pack that imports modules by a computed name keeps every file.

Code written afresh in the shape of that node pack, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

PACK_INIT = """\
    from .nodes import TextToSpeech

    NODE_CLASS_MAPPINGS = {"TextToSpeech": TextToSpeech}
"""

NODES = """\
    import subprocess
    import sys


    class TextToSpeech:
        FUNCTION = "speak"

        def speak(self, text):
            subprocess.run([sys.executable, "tools/generate.py", "--text", text])
            return (text,)
    {extra}
"""

GENERATE = """\
    import click
    import torch


    @click.command()
    @click.option("--text", type=str)
    def main(text):
        model = torch.nn.Linear(4, 4).cuda()
        print(model, text)


    if __name__ == "__main__":
        main()
"""

EXTRACT = """\
    import click
    import torch


    def get_model():
        return torch.nn.Linear(4, 4).cuda()


    @click.command()
    @click.argument("folder")
    def main(folder):
        print(get_model(), folder)


    if __name__ == "__main__":
        torch.zeros(2).cuda()
        main()
"""

WEBUI = """\
    import subprocess
    import sys

    import gradio as gr

    device = gr.Dropdown(choices=["cpu", "cuda"], value="cuda")


    def extract(folder):
        subprocess.run([sys.executable, "tools/extract_vq.py", folder])
"""


def _pack(tmp_path, extra: str = "") -> dict[str, set[tuple[str, str]]]:
    files = {"__init__.py": PACK_INIT, "nodes.py": NODES.format(extra=extra), "tools/generate.py": GENERATE,
             "tools/extract_vq.py": EXTRACT, "webui/manage.py": WEBUI}
    root = write_tree(tmp_path / "pack", files)
    lines = {"generate": ("tools/generate.py", _line(GENERATE, "torch.nn.Linear(4, 4).cuda()")),
             "get_model": ("tools/extract_vq.py", _line(EXTRACT, "torch.nn.Linear(4, 4).cuda()")),
             "smoke": ("tools/extract_vq.py", _line(EXTRACT, "torch.zeros(2).cuda()")),
             "webui": ("webui/manage.py", _line(WEBUI, 'choices=["cpu", "cuda"]'))}
    run = run_static([root], jobs=1)
    found: dict[str, set[tuple[str, str]]] = {k: set() for k in lines}
    for r in run.results:
        for f in r.findings:
            for key, (path, line) in lines.items():
                if r.path == path and f.line == line:
                    found[key].add((f.severity, (f.data or {}).get("context") or ""))
    return found


def _unreached(found: set[tuple[str, str]]) -> bool:
    return bool(found) and all(f == ("info", "unreached") for f in found)


def test_a_module_nothing_imports_or_launches_is_unreached(tmp_path):
    found = _pack(tmp_path)
    # (pd28: the "cuda" among the dropdown's choices is info as an option's accepted value; value="cuda" is unreached)
    assert ("info", "unreached") in found["webui"] and {s for s, _ in found["webui"]} == {"info"}, found


def test_a_cli_only_an_unloaded_module_launches_is_unreached(tmp_path):
    found = _pack(tmp_path)
    assert _unreached(found["get_model"]), found       # click's `main` registers nothing; its file is not run
    assert _unreached(found["smoke"]), found           # the own lines of a `__main__` block nothing runs


def test_a_launched_click_cli_keeps_its_error(tmp_path):
    found = _pack(tmp_path)
    assert any(sev == "error" for sev, _ in found["generate"]), found


def test_a_module_a_node_imports_keeps_its_module_level_error(tmp_path):
    found = _pack(tmp_path, "\n    from .webui import manage\n\n    MANAGER = manage\n")
    assert any(sev == "error" for sev, _ in found["webui"]), found


def test_a_pack_that_imports_modules_by_computed_names_keeps_every_module(tmp_path):
    extra = ("\n    import importlib\n    import os\n\n    for name in os.listdir('webui'):\n"
             "        importlib.import_module(f'.webui.{name[:-3]}', __package__)\n")
    found = _pack(tmp_path, extra)
    assert any(sev == "error" for sev, _ in found["webui"]), found


PRECISION = """\
    from enum import Enum

    import torch


    class Precision(Enum):
        FULL = "full"
        FP16 = "fp16"
        BF16 = "bf16"

        def to_dtype(self):
            match self:
                case Precision.FULL:
                    return torch.float32
                case Precision.FP16:
                    return torch.float16
                case Precision.BF16:
                    return torch.bfloat16


    def default_dtype(name):
        match name:
            case "fp32":
                dtype = torch.float32
            case _:
                dtype = torch.float16
        return dtype
"""


def _precision_findings(tmp_path) -> set[tuple[int, str]]:
    root = write_tree(tmp_path / "tree", {"precision.py": PRECISION})
    run = run_static([root], jobs=1)
    return {(f.line, f.code) for r in run.results for f in r.findings}


def test_a_match_arm_over_a_precision_name_chooses_nothing(tmp_path):
    found = _precision_findings(tmp_path)
    for text in ("case Precision.FP16:", "return torch.float16", "case Precision.BF16:", "return torch.bfloat16"):
        line = _line(PRECISION, text)
        assert not any(at == line for at, _ in found), (text, found)


def test_the_default_arm_still_chooses(tmp_path):
    found = _precision_findings(tmp_path)
    assert (_line(PRECISION, "dtype = torch.float16"), "NPU202") in found, found
