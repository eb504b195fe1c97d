"""llama.cpp's own flash-attention switch (pd56, session 32; tuned on heldout35's ComfyUI_VLM_nodes, whose
nodes/runtime.py builds `llama_cpp.Llama(**{"flash_attn": ..., "n_gpu_layers": ...})` and retries with
`kwargs["flash_attn"] = False`). In a file that drives llama.cpp (llama-cpp-python's `llama_cpp`, a llama-server,
Ollama's `options`), "flash_attn" / "flash_attention" is the engine's boolean constructor option: llama.cpp
runs its flash-attention path on its CPU, Metal, Vulkan and CANN backends alike and picks no CUDA package by name.
NPU386 there is the wrong construct; a file that also names transformers' `attn_implementation` keeps it."""
from __future__ import annotations

import re

_LLAMA_CPP = re.compile(r"\bllama_cpp\b|\bllama[-.]cpp\b|\bllama-server\b|\bollama\b", re.I)
FLASH_OPTION_NAMES = frozenset({"flash_attn", "flash_attention"})
TRANSFORMERS_CHOICE = "attn_implementation"     # a file naming it picks transformers' implementation by a flag


def drop_llama_cpp_flash_options(findings: list, text: str) -> list:
    """NPU386 on llama.cpp's flash_attn / flash_attention option in a file that drives llama.cpp, dropped."""
    if not any(f.name == "flash-attention-implementation-string" and f.symbol in FLASH_OPTION_NAMES for f in findings) \
            or not _LLAMA_CPP.search(text) or TRANSFORMERS_CHOICE in text:
        return findings
    return [f for f in findings
            if not (f.name == "flash-attention-implementation-string" and f.symbol in FLASH_OPTION_NAMES)]
