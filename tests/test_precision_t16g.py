"""t16g (issue 11, session 16; TUNED on bench/precision/tuned_t16g: ComfyUI node packs, an sd-webui extension and
kohya's sd-scripts in lora-scripts / ComfyUI-FluxTrainer): false classes of that sample, fixed as families.
Realistic code in the shapes met there; no file is copied."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, rel: str = "library/original_unet.py") -> list[tuple[int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), rel)
    return [(f.line, f.code, f.severity) for f in result.findings]


def _lines(found, code: str) -> set[int]:
    return {ln for ln, c, _ in found if c == code}


# kohya's U-Net: a bool parameter named like the package the file imports inside another method
UNET = """\
    import torch


    class CrossAttention(torch.nn.Module):
        def set_use_memory_efficient_attention(self, xformers, mem_eff):
            self.use_memory_efficient_attention_xformers = xformers
            self.use_memory_efficient_attention_mem_eff = mem_eff

        def forward(self, x):
            if self.use_memory_efficient_attention_xformers:
                return self.forward_memory_efficient_xformers(x)
            return x

        def forward_memory_efficient_xformers(self, x):
            import xformers.ops

            return xformers.ops.memory_efficient_attention(x, x, x, attn_bias=None)


    class Transformer2DModel(torch.nn.Module):
        def set_use_memory_efficient_attention(self, xformers, mem_eff):
            for transformer in self.transformer_blocks:
                transformer.set_use_memory_efficient_attention(xformers, mem_eff)
"""

# gen_img.py: the flag is tested, then the package is imported under the test, in the same function
GEN_IMG = """\
    import logging

    logger = logging.getLogger(__name__)


    def replace_unet_modules(unet, mem_eff_attn, xformers, sdpa):
        if mem_eff_attn:
            unet.set_use_memory_efficient_attention(False, True)
        elif xformers:
            logger.info("Enable xformers for U-Net")
            try:
                import xformers.ops
            except ImportError:
                raise ImportError("No xformers / xformersがインストールされていないようです")
            unet.set_use_memory_efficient_attention(True, False)
            return xformers.ops.memory_efficient_attention
"""


def test_parameter_named_like_an_imported_package_is_the_callers_flag():
    found = _found(UNET)
    xformers_lines = _lines(found, "NPU348") | _lines(found, "NPU347")
    # the import and the call in forward_memory_efficient_xformers stay; the flag, its copy on self, the test of
    # that copy and the flag handed on are not the package
    assert 15 in xformers_lines and 17 in xformers_lines
    assert not xformers_lines & {6, 10, 23}


def test_import_inside_the_function_rebinds_the_parameter():
    found = _found(GEN_IMG, "gen_img.py")
    assert 9 not in _lines(found, "NPU348")              # `elif xformers:` reads the parameter
    assert 12 in _lines(found, "NPU348") and 16 in _lines(found, "NPU347")   # the import, and the module after it


# lora-scripts' install.bash: the CUDA version read from nvidia-smi / nvcc picks the wheels in `(( ))` tests
INSTALL = """\
    #!/bin/bash
    cuda_version=$(nvidia-smi | grep -oiP 'CUDA Version: \\K[\\d\\.]+')
    cuda_major_version=$(echo "$cuda_version" | awk -F'.' '{print $1}')
    cuda_minor_version=$(echo "$cuda_version" | awk -F'.' '{print $2}')
    if (( cuda_major_version >= 12 )); then
        pip install torch==2.7.0+cu128 --extra-index-url https://download.pytorch.org/whl/cu128
    elif (( cuda_major_version == 11 && cuda_minor_version >= 8 )); then
        pip install torch==2.4.0+cu118 --extra-index-url https://download.pytorch.org/whl/cu118
    elif [ "$CUDA_MAJOR" -ge 11 ]; then
        pip install torch==2.0.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117
    else
        echo "Unsupported cuda version:$cuda_version"
        exit 1
    fi
    if (( cuda_major_version < 12 )); then
        pip install torch==2.4.0+cu118 --extra-index-url https://download.pytorch.org/whl/cu118
    fi
"""


def test_cuda_version_compared_as_a_number_gates_the_branch():
    found = _found(INSTALL, "install.bash")
    sev = {(ln, s) for ln, c, s in found if c == "NPU018"}
    assert {ln for ln, s in sev if s == "warning"} >= {6, 8, 10}      # behind `>= 12`, `== 11 && ...`, `-ge 11`
    assert (16, "error") in sev                                      # `< 12` holds where no CUDA version was read
