"""Precision fix of pd30 (session 25, tuned on heldout28's labels): applications `unreached_defs._app_entries` did not
recognise, and vendored programs inside them that nothing runs (auditor/static/unreached_defs.py).

- a root desktop GUI script (UVR's tkinter `UVR.py`), a launch script named for what it serves (LongCat-Video's
  `run_streamlit.py`) and a server in a sub-folder that is no package (voice-changer's `server/MMVCServerSIO.py`
  importing `voice_changer.*` from beside it) make the tree an application: a helper nothing calls is info;
- in an application, a file nothing loads is a program of its own only when it does something when run (a `__main__`
  block, a module-level call or loop) and can be imported: a vendored training loop that only defines functions
  (DDSP-SVC's `solver.py`) and a vendored `demucs/__main__.py` whose `.train` / `.augment` the tree lacks are info;
- a method named `exec` (`self.pipeline.exec(...)`) loads no module; `from gui_data.constants import *` reads the
  constants it brings (UVR's `separate.py` reading `CUDA_DEVICE`).
Each case has a control that keeps its severity: a root `train.py` importing gradio is no application (pd29's), a
file nothing loads with a `__main__` block, a module defining a class (a server or a pickled model may load it), a constant a
star-importer reads. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import severities_at as _severities, write_tree

GUI = """\
    import tkinter as tk
    from separate import SeperateDemucs
    from gui_data.constants import *


    class MainWindow(tk.Tk):
        def process(self):
            return SeperateDemucs(DEFAULT_DEVICE).separate()


    if __name__ == "__main__":
        MainWindow().mainloop()
"""

SEPARATE = """\
    import torch
    from gui_data.constants import *
    from demucs.utils import apply_model


    class SeperateDemucs:
        def __init__(self, device):
            self.device = CUDA_DEVICE if torch.cuda.is_available() else device

        def separate(self):
            return apply_model(self.device)
"""

CONSTANTS = """\
    CUDA_DEVICE = "cuda"
    DEFAULT_DEVICE = "cpu"
"""

DEMUCS_UTILS = """\
    import torch


    def apply_model(device):
        return torch.zeros(1, device=device)


    def average_metric(metric):
        return torch.tensor([metric], device="cuda")
"""

DEMUCS_MAIN = """\
    import torch
    from .train import train_model
    from .utils import apply_model


    def main():
        torch.cuda.set_device(0)
        train_model(apply_model)


    if __name__ == "__main__":
        main()
"""

DEMUCS_MODEL = """\
    import torch
    from torch import nn


    class HTDemucs(nn.Module):
        def forward(self, x):
            return x.to("cuda")
"""


def _uvr(tmp_path, extra: dict[str, str] | None = None):
    files = {"UVR.py": GUI, "separate.py": SEPARATE, "gui_data/constants.py": CONSTANTS,
             "demucs/__init__.py": "", "demucs/utils.py": DEMUCS_UTILS, "demucs/__main__.py": DEMUCS_MAIN,
             "demucs/htdemucs.py": DEMUCS_MODEL}
    files.update(extra or {})
    return write_tree(tmp_path / "uvr", files)


def _contexts(root, rel: str, src: str, needle: str) -> set[str]:
    return {context for _, context in _severities(root, rel, src, needle)}


def test_gui_application_helper_nothing_calls_is_unreached(tmp_path):
    root = _uvr(tmp_path)
    assert _severities(root, "demucs/utils.py", DEMUCS_UTILS, '"cuda"') == {("info", "unreached")}
    assert "unreached" not in _contexts(root, "separate.py", SEPARATE, "torch.cuda.is_available()")


def test_vendored_main_importing_modules_the_tree_lacks_is_unreached(tmp_path):
    root = _uvr(tmp_path)
    assert _severities(root, "demucs/__main__.py", DEMUCS_MAIN, "set_device") == {("info", "unreached")}


def test_vendored_main_whose_imports_exist_is_a_program_only_where_the_tree_runs_it(tmp_path):
    """With its `train.py` present, `python -m demucs` can run, but only a launch of the tree makes it a program
    (policy (s), session 47: a copied library's `__main__` nothing in the tree runs is info); a shell script of the
    tree that runs it keeps its severity."""
    train = {"demucs/train.py": "def train_model(fn):\n    return fn('cpu')\n"}
    root = _uvr(tmp_path, train)
    assert _severities(root, "demucs/__main__.py", DEMUCS_MAIN, "set_device") == {("info", "unreached")}
    root = _uvr(tmp_path / "run", {**train, "separate.sh": "#!/bin/bash\npython -m demucs -n htdemucs in.wav\n"})
    assert "unreached" not in _contexts(root, "demucs/__main__.py", DEMUCS_MAIN, "set_device")


def test_module_defining_a_class_nothing_imports_stays(tmp_path):
    """Control: a class nothing imports by name may be loaded by a server by path or by unpickling a saved model."""
    root = _uvr(tmp_path)
    assert "unreached" not in _contexts(root, "demucs/htdemucs.py", DEMUCS_MODEL, '"cuda"')


def test_star_imported_constant_a_reached_class_reads_stays(tmp_path):
    root = _uvr(tmp_path)
    assert "unreached" not in _contexts(root, "gui_data/constants.py", CONSTANTS, "CUDA_DEVICE")


def test_root_script_serving_a_ui_without_a_launch_name_is_no_application(tmp_path):
    """Control: without a GUI toolkit import the root script is no launch script (`separate.py` is no name word)."""
    root = _uvr(tmp_path, {"UVR.py": "", "separate.py": SEPARATE.replace("import torch", "import torch\nimport gradio")})
    assert "unreached" not in _contexts(root, "demucs/utils.py", DEMUCS_UTILS, '"cuda"')


SERVER = """\
    import uvicorn
    from voice_changer.manager import VoiceChangerManager


    if __name__ == "__main__":
        uvicorn.run(VoiceChangerManager().convert)
"""

MANAGER = """\
    import torch


    class VoiceChangerManager:
        def __init__(self):
            self.pipeline = None
            self.app = None

        def convert(self, audio):
            return self.pipeline.exec(audio.to(torch.device("cuda")))
"""

SOLVER = """\
    import torch
    from logger.saver import Saver


    def train(model, loader):
        scaler = torch.cuda.amp.GradScaler()
        for batch in loader:
            scaler.scale(model(batch)).backward()
"""

EXPORT = """\
    import torch


    def export(path):
        torch.onnx.export(torch.load(path).cuda(), path + ".onnx")


    if __name__ == "__main__":
        export("model.pth")
"""


def _server(tmp_path, launcher: str = "MMVCServerSIO.py"):
    return write_tree(tmp_path / "vc", {
        f"server/{launcher}": SERVER, "server/voice_changer/__init__.py": "",
        "server/voice_changer/manager.py": MANAGER, "server/voice_changer/DDSP/solver.py": SOLVER,
        "server/voice_changer/tools/export2onnx.py": EXPORT, "client/build.py": "print('build')\n"})


def test_server_sub_folder_application_training_loop_nothing_imports_is_unreached(tmp_path):
    root = _server(tmp_path)
    assert _severities(root, "server/voice_changer/DDSP/solver.py", SOLVER, "GradScaler()") == {("info", "unreached")}
    assert "unreached" not in _contexts(root, "server/voice_changer/manager.py", MANAGER, 'torch.device("cuda")')


def test_server_sub_folder_program_nothing_imports_stays(tmp_path):
    """Control: a file nothing loads with a `__main__` block is a program of its own (pd29's reading)."""
    root = _server(tmp_path)
    assert "unreached" not in _contexts(root, "server/voice_changer/tools/export2onnx.py", EXPORT, ".cuda()")


def test_server_sub_folder_script_with_no_launch_name_is_no_application(tmp_path):
    """Control: `server/run.py` is named for no UI or server: the tree is read as before."""
    root = _server(tmp_path, "run.py")
    assert "unreached" not in _contexts(root, "server/voice_changer/DDSP/solver.py", SOLVER, "GradScaler()")
