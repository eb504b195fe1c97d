"""Precision fix of pd31 (session 25, tuned on heldout28's labels): per-backend members the code already falls back
from, and an autocast a class never enables (auditor/static/backend_files.py, auditor/static/call_defaults.py).

- a kernel package picked by the package's own selection only on CUDA (cache-dit's `kernels/ops.py` imports
  `fused_merge_attn_states` from `.cutedsl` and from `.triton`; `kernels/backend.py` supports CUTEDSL only when
  `torch.cuda.is_available()`): its CuTe DSL lines are info;
- a module registering into the same registry as the project's own NPU module (`attention/backends/sage3.py` and
  `npu.py`, both `@_AttnBackendRegistry.register(...)`): its CUDA-only library lines are info;
- `with autocast(enabled=self.isHalf):` where the class sets `self.isHalf = False` in `__init__` alone and nothing
  outside it sets the attribute (voice-changer's DiffusionSVC `Pipeline`): info.
Each with a control that keeps its severity: a kernel package with no fallback member, one whose fallback the
selection does not gate on CUDA, a registry with no NPU member, an attribute another file sets on the object. Code
written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

BACKEND = """\
    from enum import Enum

    import torch


    class KernelBackend(Enum):
        TRITON = "Triton"
        CUTEDSL = "CuteDSL"

        @classmethod
        def is_supported(cls, backend):
            if backend == cls.TRITON:
                return True
            if backend == cls.CUTEDSL:
                if not torch.cuda.is_available():
                    return False
                return True
            return False
"""

OPS = """\
    from .backend import KernelBackend


    def merge_states(a, b):
        backend = KernelBackend.CUTEDSL if KernelBackend.is_supported(KernelBackend.CUTEDSL) else KernelBackend.TRITON
        if backend == KernelBackend.TRITON:
            from .triton import merge_states
            return merge_states(a, b)
        if backend == KernelBackend.CUTEDSL:
            from .cutedsl import merge_states
            return merge_states(a, b)
"""

CUTE = """\
    import cutlass.cute as cute


    @cute.jit
    def merge_states(a, b):
        return a
"""

TRITON = """\
    import triton


    def merge_states(a, b):
        return a
"""


def _kernels(tmp_path, ops=OPS, backend=BACKEND, triton=True):
    files = {"pkg/kernels/__init__.py": "", "pkg/kernels/backend.py": backend, "pkg/kernels/ops.py": ops,
             "pkg/kernels/cutedsl/__init__.py": "", "pkg/kernels/cutedsl/_merge.py": CUTE}
    if triton:
        files.update({"pkg/kernels/triton/__init__.py": "", "pkg/kernels/triton/_merge.py": TRITON})
    return write_tree(tmp_path, files)


def test_cuda_gated_kernel_member_is_info(tmp_path):
    root = _kernels(tmp_path)
    assert {s for s, _ in severities_at(root, "pkg/kernels/cutedsl/_merge.py", CUTE, "@cute.jit")} == {"info"}


def test_kernel_package_without_fallback_keeps_error(tmp_path):
    ops = OPS.replace("from .triton import merge_states", "from .reference import merge_states")
    root = _kernels(tmp_path, ops=ops, triton=False)
    assert "error" in {s for s, _ in severities_at(root, "pkg/kernels/cutedsl/_merge.py", CUTE, "@cute.jit")}


def test_member_not_gated_on_cuda_keeps_error(tmp_path):
    backend = BACKEND.replace("if not torch.cuda.is_available():", "if not _has_cutlass():")
    root = _kernels(tmp_path, backend=backend)
    assert "error" in {s for s, _ in severities_at(root, "pkg/kernels/cutedsl/_merge.py", CUTE, "@cute.jit")}


REGISTER = """\
    class _AttnBackendRegistry:
        _backends = {}

        @classmethod
        def register(cls, name, constraints=None):
            def decorator(func):
                cls._backends[name] = func
                return func
            return decorator
"""

SAGE3 = """\
    import torch

    from .register import _AttnBackendRegistry

    try:
        from sageattn3 import sageattn3_blackwell
    except Exception:
        sageattn3_blackwell = None


    def _define():
        @torch.library.impl("my_sage3_ops::sage3_attention", "CUDA")
        def _impl(q, k, v):
            return sageattn3_blackwell(q, k, v)


    @_AttnBackendRegistry.register("sage3", constraints=[])
    def _sage3_attention(query, key, value):
        _define()
        return torch.ops.my_sage3_ops.sage3_attention(query, key, value)
"""

NPU = """\
    import torch_npu

    from .register import _AttnBackendRegistry


    @_AttnBackendRegistry.register("_native_npu", constraints=[])
    def _native_npu_attention(query, key, value):
        return torch_npu.npu_fusion_attention(query, key, value, 8, "BSND")[0]
"""


def test_registry_member_beside_npu_module_is_info(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends/__init__.py": "",
                                 "pkg/backends/register.py": REGISTER, "pkg/backends/sage3.py": SAGE3,
                                 "pkg/backends/npu.py": NPU})
    found = severities_at(root, "pkg/backends/sage3.py", SAGE3, "torch.ops.my_sage3_ops")
    assert {s for s, _ in found} == {"info"}


def test_registry_without_npu_member_keeps_error(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends/__init__.py": "",
                                 "pkg/backends/register.py": REGISTER, "pkg/backends/sage3.py": SAGE3,
                                 "pkg/backends/native.py": NPU.replace("import torch_npu", "import torch")})
    found = severities_at(root, "pkg/backends/sage3.py", SAGE3, "torch.ops.my_sage3_ops")
    assert "error" in {s for s, _ in found}


PIPELINE = """\
    import torch
    from torch.cuda.amp import autocast


    class Pipeline(object):
        def __init__(self, model, isHalf):
            self.model = model
            self.isHalf = False

        def exec(self, feats):
            with torch.no_grad():
                with autocast(enabled=self.isHalf):
                    return self.model(feats)
"""

MANAGER = """\
    from pipeline import Pipeline


    def build(model, is_half):
        return Pipeline(model, is_half)
"""


def test_autocast_on_attribute_the_class_sets_false_is_info(tmp_path):
    root = write_tree(tmp_path, {"pipeline.py": PIPELINE, "manager.py": MANAGER})
    found = severities_at(root, "pipeline.py", PIPELINE, "with autocast(enabled=self.isHalf)")
    assert "error" not in {s for s, _ in found} and ("info", "autocast-off") in found


def test_autocast_on_attribute_set_from_outside_keeps_its_finding(tmp_path):
    manager = MANAGER.replace("return Pipeline(model, is_half)",
                              "pipe = Pipeline(model, is_half)\n        pipe.isHalf = is_half\n        return pipe")
    manager += "\n\n    def infer(pipe, feats):\n        return pipe.exec(feats)\n"      # the pipeline is run
    root = write_tree(tmp_path, {"pipeline.py": PIPELINE, "manager.py": manager})
    found = severities_at(root, "pipeline.py", PIPELINE, "with autocast(enabled=self.isHalf)")
    assert "warning" in {s for s, _ in found}  # an enabled CUDA autocast region: warning (decision (w))


SINE = """\
    import torch


    class SineGen(torch.nn.Module):
        def forward(self, f0):
            rad_values = f0 % 1
            is_half = rad_values.dtype is not torch.float32
            tmp_over_one = torch.cumsum(rad_values.double(), 1)
            if is_half:
                tmp_over_one = tmp_over_one.half()
            else:
                tmp_over_one = tmp_over_one.float()
            return tmp_over_one
"""


def test_half_restoring_the_input_dtype_is_not_reported(tmp_path):
    from auditor.runner import run_static
    from tests.static_snippets import line_of

    root = write_tree(tmp_path, {"sine.py": SINE})
    line = line_of(SINE, "tmp_over_one.half()")
    run = run_static([root], jobs=1)
    assert not [f for r in run.results for f in r.findings if f.line == line and f.name == "fp16-dtype"]


def test_half_forced_without_a_float_arm_is_reported(tmp_path):
    from auditor.runner import run_static
    from tests.static_snippets import line_of

    src = SINE.replace("            else:\n                tmp_over_one = tmp_over_one.float()\n", "")
    root = write_tree(tmp_path, {"sine.py": src})
    line = line_of(src, "tmp_over_one.half()")
    run = run_static([root], jobs=1)
    assert [f for r in run.results for f in r.findings if f.line == line and f.name == "fp16-dtype"]


EMBED = """\
    import onnxruntime
    import torch
    import torchaudio


    def main(paths, onnx_path):
        ort_session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        out = {}
        for utt, path in paths.items():
            audio, _ = torchaudio.load(path)
            feat = audio - audio.mean(dim=0, keepdim=True)
            out[utt] = ort_session.run(None, {"feats": feat.unsqueeze(0).cpu().numpy()})[0].flatten().tolist()
        return out
"""


def _sync_hints(root, rel, src, needle):
    from auditor.runner import run_static
    from tests.static_snippets import line_of

    line = line_of(src, needle)
    return [f for r in run_static([root], jobs=1).results if r.path == rel for f in r.findings
            if f.line == line and f.symbol == "tolist"]


def test_tolist_on_onnx_runtime_outputs_is_not_a_sync(tmp_path):
    root = write_tree(tmp_path, {"embed.py": EMBED})
    assert not _sync_hints(root, "embed.py", EMBED, "ort_session.run(")


def test_tolist_on_a_model_output_stays_a_sync(tmp_path):
    src = EMBED.replace('ort_session.run(None, {"feats": feat.unsqueeze(0).cpu().numpy()})[0]', "model(feat)")
    src = src.replace("def main(paths, onnx_path):", "def main(paths, onnx_path, model):")
    root = write_tree(tmp_path, {"embed.py": src})
    assert _sync_hints(root, "embed.py", src, "model(feat)")


INDEX = """\
    import torch


    def index_initial(n_batch, n_ch, tensor=True):
        batch_index = [[[i]] * n_ch for i in range(n_batch)]
        if tensor:
            batch_index = torch.tensor(batch_index)
            if torch.cuda.is_available():
                batch_index = batch_index.cuda()
        return batch_index
"""

BLOCK = """\
    from index import index_initial


    def forward(x, channels):
        return index_initial(x.size(0), channels, tensor=False)
"""


def test_true_default_flag_every_caller_passes_off_is_info(tmp_path):
    root = write_tree(tmp_path, {"index.py": INDEX, "block.py": BLOCK})
    assert {s for s, _ in severities_at(root, "index.py", INDEX, "batch_index.cuda()")} == {"info"}


def test_true_default_flag_left_on_by_a_caller_keeps_severity(tmp_path):
    block = BLOCK + "\n\n    def other(x, channels):\n        return index_initial(x.size(0), channels)\n"
    root = write_tree(tmp_path, {"index.py": INDEX, "block.py": block})
    assert "info" not in {s for s, _ in severities_at(root, "index.py", INDEX, "batch_index.cuda()")}
