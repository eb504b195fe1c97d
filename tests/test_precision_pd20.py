"""Precision fixes of pd20 (session 21, tuned on heldout24 after its draw).

- call_defaults: a `device=None` parameter whose CUDA choice is made in the body (`if device is None:
  self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')`, Hallo2's vendored CodeFormer
  FaceRestoreHelper) is a default like `device="cuda"`: when every caller passes the device (Hallo2's
  `pre_u_loader(..., device, ...)` hands on its own), the branch never runs here (policy (f), info).
- neutral_uses: the dtype of a tokenizer's / processor's `from_pretrained` (ID_Animator's `CLIPTokenizer`), a module
  object only bound to another name (Crystools' `self.pynvml = pynvml`), `CppExtension` on a line whose
  CUDAExtension / BuildExtension is reported (basicsr's setup.py import) are not findings;
- vendor_dispatch: a vendor name compared in a board probe that reads `/proc/device-tree/model` (Crystools'
  `is_jetson()`) is not a finding.

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree, device_findings_at

HELPER = """\
    import torch


    class FaceRestoreHelper(object):
        def __init__(self, upscale_factor, face_size=512, det_model='retinaface_resnet50', device=None):
            self.upscale_factor = int(upscale_factor)
            if device is None:
                self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            else:
                self.device = device
            self.face_size = face_size


    def load_net(path, device=None):
        device = device or torch.device("cuda")
        return torch.load(path, map_location=device)
"""

LOADER = """\
    from .helper import FaceRestoreHelper, load_net


    def pre_loader(upscale, device, model_path):
        net = load_net(model_path, device=device)
        return net, FaceRestoreHelper(upscale, face_size=512, det_model='retinaface_resnet50', device={device})
"""

PACK_INIT = """\
    from .loader import pre_loader

    NODE_CLASS_MAPPINGS = {"Loader": pre_loader}
"""


def test_a_none_default_chosen_in_the_body_is_overridden_by_every_caller(tmp_path):
    run = run_static([write_tree(tmp_path / "pass", {"__init__.py": PACK_INIT, "helper.py": HELPER,
                                                     "loader.py": LOADER.replace("{device}", "device")})], jobs=1)
    assert {s for s in device_findings_at(run, "helper.py", HELPER, "torch.device('cuda' if")} == {("info", "overridden-default")}
    assert {s for s in device_findings_at(run, "helper.py", HELPER, 'device or torch.device("cuda")')} \
        == {("info", "overridden-default")}
    # a caller that leaves the device out lets the CUDA choice through: it keeps its severity
    run = run_static([write_tree(tmp_path / "omit", {"__init__.py": PACK_INIT, "helper.py": HELPER,
                                                     "loader.py": LOADER.replace(", device={device}", "")})], jobs=1)
    assert ("warning", "cuda-available-branch") in device_findings_at(run, "helper.py", HELPER, "torch.device('cuda' if")


MONITOR = """\
    import torch


    def is_jetson() -> bool:
        try:
            with open('/proc/device-tree/model', 'r') as f:
                model = f.read().strip()
                return "NVIDIA" in model
        except Exception:
            return False


    class GPUInfo:
        def __init__(self):
            self.loaded = False
            if not is_jetson():
                try:
                    import pynvml
                    self.pynvml = pynvml
                    self.pynvml.nvmlInit()
                    self.loaded = True
                except ImportError:
                    pass

        def name(self, i):
            if "NVIDIA" in torch.cuda.get_device_name(i):
                return "nvidia"
            return self.pynvml.nvmlDeviceGetName(self.pynvml.nvmlDeviceGetHandleByIndex(i))
"""

NODE = """\
    import torch
    from transformers import CLIPTokenizer, CLIPTextModel, CLIPImageProcessor


    def load(sd_version):
        tokenizer = CLIPTokenizer.from_pretrained(sd_version, subfolder="tokenizer", torch_dtype=torch.float16)
        text_encoder = CLIPTextModel.from_pretrained(sd_version, subfolder="text_encoder", torch_dtype=torch.float16)
        processor = CLIPImageProcessor.from_pretrained(sd_version, torch_dtype=torch.float16)
        return tokenizer, text_encoder.to("npu"), processor
"""

SETUP = """\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension
    from torch.utils.cpp_extension import CppExtension as HostExtension

    setup(name="ops", ext_modules=[CUDAExtension("dcn", ["dcn.cpp", "dcn_cuda.cu"])],
          cmdclass={"build_ext": BuildExtension})
"""


def _codes(run, rel, src, text):
    line = _line(src, text)
    r = next(r for r in run.results if r.path == rel)
    return sorted(f.code for f in r.findings if f.line == line)


def test_probes_bindings_tokenizers_and_host_extensions(tmp_path):
    run = run_static([write_tree(tmp_path, {"monitor.py": MONITOR, "node.py": NODE, "setup.py": SETUP})], jobs=1)
    # the Jetson probe and the module binding are not findings; the import, the NVML calls and a vendor test of
    # the running device's name are
    assert _codes(run, "monitor.py", MONITOR, 'return "NVIDIA" in model') == []
    assert _codes(run, "monitor.py", MONITOR, "self.pynvml = pynvml") == []
    assert "NPU406" in _codes(run, "monitor.py", MONITOR, "import pynvml")
    assert "NPU406" in _codes(run, "monitor.py", MONITOR, "self.pynvml.nvmlInit()")
    assert "NPU076" in _codes(run, "monitor.py", MONITOR, '"NVIDIA" in torch.cuda.get_device_name(i)')
    # a tokenizer's / processor's dtype chooses nothing; the text encoder's loads fp16 weights
    assert "NPU202" not in _codes(run, "node.py", NODE, "CLIPTokenizer.from_pretrained(")
    assert "NPU202" not in _codes(run, "node.py", NODE, "CLIPImageProcessor.from_pretrained(")
    assert "NPU202" in _codes(run, "node.py", NODE, "CLIPTextModel.from_pretrained(")
    # CppExtension beside the CUDA build on one line goes; alone on its line it stays (info)
    first = [c for c in _codes(run, "setup.py", SETUP, "BuildExtension, CppExtension, CUDAExtension")]
    r = next(r for r in run.results if r.path == "setup.py")
    line = _line(SETUP, "BuildExtension, CppExtension, CUDAExtension")
    assert "NPU370" in first and not any(f.symbol.endswith("CppExtension") for f in r.findings if f.line == line)
    assert _codes(run, "setup.py", SETUP, "CppExtension as HostExtension") == ["NPU371"]


SAMPLER = """\
    import torch

    device = "cuda"


    def sample(model, latents, steps):
        model.to(device)
        noise = torch.randn(latents.shape, device=device)
        for t in range(steps):
            latents = model(latents + noise, torch.tensor([t]).to("cuda"))
        return latents
"""


def test_uses_of_a_device_variable_are_not_findings_of_their_own(tmp_path):
    # lead decision 4 (session 21): the choice `device = "cuda"` is the finding; `model.to(device)` and
    # `device=device` below it are not; a CUDA spelling in the use itself (`.to("cuda")`) stays
    run = run_static([write_tree(tmp_path, {"sampler.py": SAMPLER})], jobs=1)
    assert _codes(run, "sampler.py", SAMPLER, 'device = "cuda"') == ["NPU003"]
    assert _codes(run, "sampler.py", SAMPLER, "model.to(device)") == []
    assert _codes(run, "sampler.py", SAMPLER, "device=device)") == []
    assert _codes(run, "sampler.py", SAMPLER, '.to("cuda")') == ["NPU003"]
