"""Precision fixes of tq54e (session 54, tuned on heldout71's trees 5-8: MagicDriveDiT, Efficient-Computing, tpu-mq,
CanglongPhysics).

- flash-attention / xformers switches whose path the tree already routes to torch_npu, or that its scripts switch
  off on the NPU (auditor/project/npu_switch_arms.py);
- per-hardware environment files named for their machine and toolkit release (`a800_cu118.yaml` beside
  `910b_cann8.0.RC2_aarch64.yaml`): the CUDA members of a set with an Ascend member (auditor/static/backend_files.py);
- a package named for a chip (`tpu_mq/`, Sophgo's deploy target) holds XLA code only where the code shows it
  (auditor/static/backends.py `_xla_code`).

Code written afresh in the shape of the trees' code, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree


def _at(root: Path, rel: str, line: int) -> list[tuple[str, str, str]]:
    """(code, severity, context) of the findings of the whole-tree static pass on one line of `rel`."""
    return sorted((f.code, f.severity, (f.data or {}).get("context") or "")
                  for r in run_static([root], jobs=1).results if r.path == rel for f in r.findings if f.line == line)


# an Open-Sora-style DiT block whose flash path has a torch_npu arm
BLOCKS = """\
    import torch
    import torch.nn as nn

    if not torch.cuda.is_available():
        import torch_npu
        USE_NPU = True
    else:
        from flash_attn import flash_attn_func
        USE_NPU = False


    class SelfAttention(nn.Module):
        def __init__(self, dim, num_heads=8, enable_flash_attn: bool = False):
            super().__init__()
            self.num_heads = num_heads
            self.qkv = nn.Linear(dim, dim * 3)
            self.enable_flash_attn = enable_flash_attn

        def forward(self, x):
            B, N, C = x.shape
            use_flash = self.enable_flash_attn and (N > B)
            q, k, v = self.qkv(x).view(B, N, 3, self.num_heads, -1).unbind(2)
            if self.enable_flash_attn:
                if USE_NPU:
                    out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND")[0]
                else:
                    out = flash_attn_func(q, k, v)
            else:
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            return out.reshape(B, N, C)
"""
# the same block without the NPU arm: the switch still selects flash_attn on Ascend
BLOCKS_CUDA = """\
    import torch
    import torch.nn as nn
    from flash_attn import flash_attn_func


    class SelfAttention(nn.Module):
        def __init__(self, dim, num_heads=8, enable_flash_attn: bool = False):
            super().__init__()
            self.num_heads = num_heads
            self.qkv = nn.Linear(dim, dim * 3)
            self.enable_flash_attn = enable_flash_attn

        def forward(self, x):
            B, N, C = x.shape
            q, k, v = self.qkv(x).view(B, N, 3, self.num_heads, -1).unbind(2)
            if self.enable_flash_attn:
                out = flash_attn_func(q, k, v)
            else:
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            return out.reshape(B, N, C)
"""
CONFIG = """\
    model = dict(
        type="DiT",
        enable_flash_attn=True,
        frame_emb=dict(type="FrameEmbedder", enable_xformers=True),
    )
"""
TRAIN = """\
    import torch
    from mmengine.config import Config

    USE_NPU = not torch.cuda.is_available()


    def conf_set(cfg, key, value):
        cfg.merge_from_dict({key: value})


    def main(path):
        cfg = Config.fromfile(path)
        if USE_NPU:  # disable some kernels
            conf_set(cfg, "model.frame_emb.enable_xformers", False)
        return cfg
"""
TRAIN_CUDA = """\
    import torch
    from mmengine.config import Config


    def conf_set(cfg, key, value):
        cfg.merge_from_dict({key: value})


    def main(path):
        cfg = Config.fromfile(path)
        if not torch.cuda.is_available():
            print("running without xformers")
        return cfg
"""


def test_a_flash_switch_whose_path_has_a_torch_npu_arm_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"pkg/blocks.py": BLOCKS, "configs/dit.py": CONFIG, "train.py": TRAIN})
    assert ("NPU357", "info", "npu-path") in _at(root, "configs/dit.py", line_of(CONFIG, "enable_flash_attn"))
    assert ("NPU357", "info", "npu-path") in _at(root, "configs/dit.py", line_of(CONFIG, "enable_xformers"))


def test_a_flash_switch_with_only_a_cuda_path_keeps_its_warning(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"pkg/blocks.py": BLOCKS_CUDA, "configs/dit.py": CONFIG, "train.py": TRAIN_CUDA})
    assert ("NPU357", "warning", "") in _at(root, "configs/dit.py", line_of(CONFIG, "enable_flash_attn"))
    assert ("NPU357", "warning", "") in _at(root, "configs/dit.py", line_of(CONFIG, "enable_xformers"))


ENV_CUDA = """\
    name: dit
    channels:
      - defaults
    dependencies:
      - python=3.9
      - pip:
        - apex==0.1
        - torch==2.4.0
"""
ENV_NPU = """\
    name: dit
    dependencies:
      - python=3.9
      - pip:
        - apex==0.1+ascend
        - torch==2.4.0
        - torch_npu==2.4.0
"""


def test_a_cuda_tagged_environment_beside_a_cann_tagged_one_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"requirements/a800_cu118.yaml": ENV_CUDA,
                                 "requirements/910b_cann8.0.RC2_aarch64.yaml": ENV_NPU})
    found = _at(root, "requirements/a800_cu118.yaml", line_of(ENV_CUDA, "apex"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_cuda_tagged_environments_alone_keep_their_findings(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"requirements/a800_cu118.yaml": ENV_CUDA,
                                 "requirements/h20_cu124.yaml": ENV_CUDA})
    found = _at(root, "requirements/a800_cu118.yaml", line_of(ENV_CUDA, "apex"))
    assert any(severity == "error" for _, severity, _ in found)


# a quantization toolkit named for its deploy chip: plain torch observers and QAT modules
OBSERVER = """\
    import torch


    class MSEObserver(torch.nn.Module):
        def forward(self, x, scale, zero_point):
            best = None
            for i in range(80):
                err = torch.fake_quantize_per_tensor_affine(x, scale.item(), int(zero_point.item()), 0, 255)
                best = err if best is None else torch.minimum(best, err)
            return best


    if __name__ == "__main__":
        inputs = torch.rand(2, 3, 224, 224).cuda()
        print(MSEObserver()(inputs, torch.tensor(0.1), torch.tensor(0)))
"""
# PyTorch/XLA code under a `tpu/` folder: another backend's
XLA_WORKER = """\
    import torch
    import torch_xla.core.xla_model as xm


    def run(model, batch):
        device = xm.xla_device()
        out = model(batch.to(device))
        if __name__ == "__main__":
            out = out.cuda()
        return out.sum().item()
"""


def test_a_package_named_for_a_chip_holding_plain_torch_keeps_its_findings(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tpu_mq/__init__.py": "", "tpu_mq/observer.py": OBSERVER})
    found = _at(root, "tpu_mq/observer.py", line_of(OBSERVER, ".cuda()"))
    assert ("NPU001", "error", "") in found


def test_xla_code_under_a_tpu_folder_stays_another_backends(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tpu/__init__.py": "", "tpu/worker.py": XLA_WORKER})
    found = _at(root, "tpu/worker.py", line_of(XLA_WORKER, ".cuda()"))
    assert found and all(severity == "info" and context == "other-backend" for _, severity, context in found)


# a training script that loads the Ascend shim when CUDA is absent, then asserts a device
TRAIN_SHIM = """\
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        import torch_npu
        from torch_npu.contrib import transfer_to_npu


    def main():
        assert torch.cuda.is_available(), "Training currently requires at least one GPU."
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
"""


def _messages(root: Path, rel: str, line: int) -> list[tuple[str, str]]:
    return [(f.severity, f.message) for r in run_static([root], jobs=1).results if r.path == rel
            for f in r.findings if f.line == line and f.code == "NPU002"]


def test_a_torch_cuda_gate_under_transfer_to_npu_is_no_gate(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"scripts/train.py": TRAIN_SHIM})
    found = _messages(root, "scripts/train.py", line_of(TRAIN_SHIM, "set_device"))
    assert found and all(sev == "info" and "remapped to the NPU" in msg and "runs only where CUDA" not in msg
                         for sev, msg in found)


def test_a_torch_cuda_gate_without_the_shim_keeps_its_note(tmp_path: Path) -> None:
    src = TRAIN_SHIM.replace("        from torch_npu.contrib import transfer_to_npu\n", "")
    root = write_tree(tmp_path, {"scripts/train.py": src})
    found = _messages(root, "scripts/train.py", line_of(src, "set_device"))
    assert found and all(sev == "warning" and "runs only where CUDA" in msg for sev, msg in found)


# a detector's INT8 engine builder for TensorRT, one of its per-runtime quantization tools
TRT_BUILDER = """\
    import tensorrt as trt

    TRT_LOGGER = trt.Logger()


    def build_engine(onnx_file, calib, max_batch_size=32):
        builder = trt.Builder(TRT_LOGGER)
        network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        config = builder.create_builder_config()
        config.set_flag(trt.BuilderFlag.INT8)
        config.int8_calibrator = calib
        return builder.build_engine(network, config)
"""
MNN_QUANT = """\
    import MNN


    def quantize(model_file, out_file, config):
        MNN.tools.mnnquant(model_file, out_file, config)
"""


def test_a_tensorrt_tool_beside_other_runtimes_tools_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/quantization/tensorrt/post_training/build.py": TRT_BUILDER,
                                 "tools/quantization/mnn/quant.py": MNN_QUANT})
    found = _at(root, "tools/quantization/tensorrt/post_training/build.py", line_of(TRT_BUILDER, "import tensorrt"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_a_tensorrt_tool_alone_keeps_its_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/quantization/tensorrt/post_training/build.py": TRT_BUILDER,
                                 "tools/quantization/calib/data.py": "import numpy as np\n"})
    found = _at(root, "tools/quantization/tensorrt/post_training/build.py", line_of(TRT_BUILDER, "import tensorrt"))
    assert any(severity == "error" for _, severity, _ in found)


# a QAT module named for the deploy chip, in a file of plain torch modules
FUSED = """\
    import torch
    import torch.nn as nn


    class LinearBn1d_tpu(nn.Linear):
        def bias_fake_quant(self, bias, scale):
            if torch.nonzero(scale).size()[0] != scale.numel():
                scale = scale.clamp(min=1e-8)
            return bias / scale

        def forward(self, x):
            return super().forward(x.cuda())
"""
FUSED_XLA = FUSED.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla.core.xla_model as xm\n")


def test_a_class_named_for_a_chip_in_plain_torch_keeps_its_findings(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"quant/modules/linear_fused.py": FUSED})
    assert ("NPU001", "error", "") in _at(root, "quant/modules/linear_fused.py", line_of(FUSED, "x.cuda()"))


def test_a_class_named_for_a_tpu_in_xla_code_is_another_backends(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"quant/modules/linear_fused.py": FUSED_XLA})
    found = _at(root, "quant/modules/linear_fused.py", line_of(FUSED_XLA, "x.cuda()"))
    assert all(severity == "info" for _, severity, _ in found)
