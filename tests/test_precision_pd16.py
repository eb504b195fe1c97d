"""Precision fixes of pd16 (session 18, post-draw, tuned on bench/precision/tuned_t18g; TUNED): an aliased import of
a module every torch build has (`import torch.cuda as cuda`, ReActor's settings UI) whose name the file reads only
as `cuda.<attr>` is info (context `module-import`): each use is reported where it is. Controls: the alias passed on
whole keeps the import's finding, and the use keeps its own. (NPU076 on the program's own CPU / CUDA setting is
covered by the rule's `ok` examples in rules/device_cuda_name_strings.yaml.)

Code written afresh in the shape of that extension, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

SETTINGS_UI = """\
    import gradio as gr
    {imports}

    EP_is_visible = True if {alias}.is_available() else False


    def show(devices):
        {extra}
        return gr.Radio(label="Execution Provider", choices=devices, visible=EP_is_visible)
"""


def _findings(tmp_path, imports: str, alias: str, extra: str = "pass") -> dict[int, set[tuple[str, str, str]]]:
    src = SETTINGS_UI.format(imports=imports, alias=alias, extra=extra)
    root = write_tree(tmp_path / "ext", {"reactor_ui/settings_ui.py": src})
    out: dict[int, set[tuple[str, str, str]]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            out.setdefault(f.line, set()).add((f.symbol or "", f.severity, (f.data or {}).get("context") or ""))
    return {"import": out.get(_line(src, imports), set()), "use": out.get(_line(src, ".is_available()"), set())}


def test_an_aliased_torch_cuda_import_read_only_through_attributes_is_info(tmp_path):
    found = _findings(tmp_path, "import torch.cuda as cuda", "cuda")
    assert ("torch.cuda", "info", "module-import") in found["import"], found
    assert any(sym == "torch.cuda.is_available" and sev != "info" for sym, sev, _ in found["use"]), found


def test_from_torch_import_cuda_read_only_through_attributes_is_info(tmp_path):
    found = _findings(tmp_path, "from torch import cuda", "cuda")
    assert ("torch.cuda", "info", "module-import") in found["import"], found


def test_the_alias_passed_on_whole_keeps_the_import_finding(tmp_path):
    found = _findings(tmp_path, "import torch.cuda as cuda", "cuda", "print(cuda)")
    assert any(sym == "torch.cuda" and sev != "info" for sym, sev, _ in found["import"]), found


MODEL_IO = """\
    import torch


    def load_state_dict(model, state_dict):
        do_prefix = isinstance(model, (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel))
        return model.load_state_dict(state_dict)


    def wrap(model):
        return torch.nn.DataParallel(model)
"""


def test_data_parallel_only_tested_as_a_type_is_info_and_the_wrap_keeps_its_error(tmp_path):
    root = write_tree(tmp_path / "zoe", {"models/model_io.py": MODEL_IO})
    found: dict[int, set[tuple[str, str]]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            if f.code == "NPU112":
                found.setdefault(f.line, set()).add((f.severity, (f.data or {}).get("context") or ""))
    assert found.get(_line(MODEL_IO, "isinstance(")) == {("info", "type-test")}, found
    assert found.get(_line(MODEL_IO, "return torch.nn.DataParallel")) == {("error", "")}, found
