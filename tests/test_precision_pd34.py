"""Precision fixes of pd34 (session 26, tuned on the pooled still-false rows of heldout20..heldout29; docs/precision.md
"pd34"): each shape with a control that keeps its severity. Code written afresh in the shape of the trees the rows
came from (lorax, TGI-style servers, HunyuanVideo-Foley), not copied.

- the `else` after a test that holds only on another backend (`if SYSTEM == "xpu": import ipex` / `else: import
  vllm._custom_ops`) is the default path, which runs on Ascend as on CUDA: its import is not optional (error, not
  warning); an `else` after a CUDA test stays a guard;
- a guarded optional import whose every use sits in a top-level function nothing in the tree names (`flash_attn_no_pad`)
  is info (the lead's decision 1), in any tree; one used by a function something calls keeps its warning;
- a function that builds its tensors on the host and returns numpy (latent diffusion's `make_beta_schedule`) has no
  dtype hints; one that builds them on a device keeps them."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

PAGED = """\
    import torch

    from server_pkg.utils.imports import SYSTEM

    if SYSTEM == "xpu":
        import intel_extension_for_pytorch as ipex
    else:
        try:
            import vllm._custom_ops as ops
        except Exception as e:
            raise ImportError(f"Could not import vllm paged attention: {e}") from e


    def paged_attention(out, query, cache):
        if SYSTEM == "xpu":
            return ipex.llm.modules.PagedAttention.single_query_cached_kv_attention(out, query, cache)
        return ops.paged_attention_v1(out, query, cache)
"""

IMPORTS = """\
    import torch

    SYSTEM = "xpu" if hasattr(torch, "xpu") and torch.xpu.is_available() else "cuda"
"""


def _paged_tree(tmp_path, paged: str):
    return write_tree(tmp_path, {"server_pkg/__init__.py": "", "server_pkg/utils/__init__.py": "",
                                 "server_pkg/utils/imports.py": IMPORTS, "server_pkg/utils/paged.py": paged})


def test_import_in_the_default_arm_after_another_backend_test_is_not_optional(tmp_path):
    root = _paged_tree(tmp_path, PAGED)
    rel = "server_pkg/utils/paged.py"
    assert {s for s, _ in severities_at(root, rel, PAGED, "import vllm._custom_ops")} == {"error"}
    assert {s for s, _ in severities_at(root, rel, PAGED, "ops.paged_attention_v1")} == {"error"}


def test_import_under_a_cuda_test_stays_a_guard(tmp_path):
    src = """\
        import torch

        from server_pkg.utils.imports import SYSTEM

        if SYSTEM == "xpu":
            import intel_extension_for_pytorch as ipex
        elif SYSTEM == "cuda":
            import vllm._custom_ops as ops
        else:
            ops = None
    """
    root = _paged_tree(tmp_path, src)
    assert {s for s, _ in severities_at(root, "server_pkg/utils/paged.py", src, "import vllm._custom_ops")} \
        == {"warning"}


ATTN_LAYERS = """\
    import torch

    try:
        from flash_attn import flash_attn_qkvpacked_func, flash_attn_varlen_qkvpacked_func
        from flash_attn.bert_padding import pad_input, unpad_input
    except ImportError:
        flash_attn_qkvpacked_func = None


    def flash_attn_no_pad(qkv, mask, causal=False):
        x_unpad, indices, cu_seqlens, max_s = unpad_input(qkv, mask)
        out = flash_attn_varlen_qkvpacked_func(x_unpad, cu_seqlens, max_s, causal=causal)
        return pad_input(out, indices, qkv.shape[0], qkv.shape[1])


    def attention(q, k, v, mode="torch"):
        if mode == "flash" and flash_attn_qkvpacked_func is not None:
            return flash_attn_qkvpacked_func(torch.stack([q, k, v], dim=2))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
"""

MODEL = """\
    from .attn_layers import attention


    def forward(q, k, v):
        return attention(q, k, v)
"""


def _foley_tree(tmp_path, model: str):
    return write_tree(tmp_path, {"foley/__init__.py": "", "foley/attn_layers.py": ATTN_LAYERS,
                                 "foley/model.py": model, "pyproject.toml": '[project]\nname = "foley"\n'})


def test_guarded_import_used_only_by_a_function_nothing_names_is_info(tmp_path):
    # (the caller hands on the user's mode: with `mode` left at its "torch" default the flash arm is never taken, tq55d)
    root = _foley_tree(tmp_path, MODEL.replace("def forward(q, k, v):", "def forward(q, k, v, mode):")
                       .replace("return attention(q, k, v)", "return attention(q, k, v, mode=mode)"))
    rel = "foley/attn_layers.py"
    assert severities_at(root, rel, ATTN_LAYERS, "from flash_attn.bert_padding") == {("info", "unreached")}
    assert severities_at(root, rel, ATTN_LAYERS, "out = flash_attn_varlen") == {("info", "unreached")}
    # the name another function, which the model calls, uses keeps its warning
    assert {s for s, _ in severities_at(root, rel, ATTN_LAYERS, "return flash_attn_qkvpacked_func(")} == {"warning"}


def test_guarded_import_used_by_a_function_the_tree_calls_keeps_its_warning(tmp_path):
    model = MODEL.replace("from .attn_layers import attention", "from .attn_layers import attention, "
                          "flash_attn_no_pad").replace("return attention(q, k, v)",
                                                       "return flash_attn_no_pad(q, None) or attention(q, k, v)")
    root = _foley_tree(tmp_path, model)
    rel = "foley/attn_layers.py"
    assert severities_at(root, rel, ATTN_LAYERS, "from flash_attn.bert_padding") == {("warning", "guarded-import")}
    assert severities_at(root, rel, ATTN_LAYERS, "out = flash_attn_varlen") == {("warning", "guarded-import")}


BETA_SCHEDULE = """\
    import numpy as np
    import torch


    def make_beta_schedule(schedule, n_timestep, linear_start=1e-4, linear_end=2e-2, cosine_s=8e-3):
        if schedule == "linear":
            betas = torch.linspace(linear_start ** 0.5, linear_end ** 0.5, n_timestep, dtype=torch.float64) ** 2
        elif schedule == "cosine":
            timesteps = torch.arange(n_timestep + 1, dtype=torch.float64) / n_timestep + cosine_s
            alphas = torch.cos(timesteps / (1 + cosine_s) * np.pi / 2).pow(2)
            betas = 1 - alphas[1:] / alphas[:-1]
        else:
            raise ValueError(f"schedule '{schedule}' unknown.")
        return betas.numpy()
"""


def _dtype_findings(rel: str, src: str) -> set[tuple[int, str]]:
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine
    from tests.static_snippets import line_codes

    return set(line_codes(StaticEngine(load_rules()), rel, src))


def test_schedule_built_on_the_host_and_returned_as_numpy_has_no_dtype_hints():
    found = _dtype_findings("ldm/modules/diffusionmodules/util.py", BETA_SCHEDULE)
    assert not any(code == "NPU208" for _, code in found), found


def test_schedule_built_on_a_device_keeps_its_dtype_hints():
    src = BETA_SCHEDULE.replace("n_timestep, linear_start", "n_timestep, device, linear_start").replace(
        "n_timestep, dtype=torch.float64) ** 2", "n_timestep, dtype=torch.float64, device=device) ** 2")
    found = _dtype_findings("ldm/modules/diffusionmodules/util.py", src)
    assert any(code == "NPU208" for _, code in found), found


def test_a_for_else_under_an_import_guard_is_read(tmp_path):
    """(a `for ... else:` has an `orelse` but no test: the default-arm check reads only an `if`'s)"""
    src = """\
        import torch

        try:
            import xformers.ops as xops
            for name in ("memory_efficient_attention",):
                getattr(xops, name)
            else:
                HAS_XFORMERS = True
        except ImportError:
            HAS_XFORMERS = False


        def attend(q, k, v):
            return torch.cuda.synchronize() if HAS_XFORMERS else None
    """
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/attn.py": src})
    assert {s for s, _ in severities_at(root, "pkg/attn.py", src, "import xformers.ops")} == {"warning"}
