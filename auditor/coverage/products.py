"""Product vocabulary shared by the builder and the query API.

The Ascend documentation names products by their marketing titles inside <term> tags; these map the
titles to the CLI's product profiles (auditor.target.PRODUCTS).  The mapping is vocabulary, not
coverage data: every support fact still comes from the pages the builder reads.
"""
from __future__ import annotations

import re

# The native_api support tables carry one row per verified product.  910A ("Atlas 训练系列产品") and
# 310P ("Atlas 推理系列产品") have no row there for torch 2.7.1 .. 2.13.0: their support is unverified.
NATIVE_API_COLUMNS = {
    "a2": "Atlas A2 训练系列产品",
    "a3": "Atlas A3 训练系列产品",
    "950": "Ascend 950DT",
    "910a": "Atlas 训练系列产品",
    "310p": "Atlas 推理系列产品",
}

# Dtype spellings in the Chinese docs and the custom-op pages -> torch dtype names.
DTYPE_ALIASES = {
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp16": "float16", "float16": "float16", "half": "float16",
    "fp32": "float32", "float32": "float32", "float": "float32",
    "fp64": "float64", "float64": "float64", "double": "float64",
    "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "bool": "bool", "complex32": "complex32", "complex64": "complex64", "complex128": "complex128",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2", "fp8": "float8",
    "hifloat8": "hifloat8", "float4_e2m1": "float4_e2m1", "float4_e1m2": "float4_e1m2",
    "int4": "int4",
}


def products_in_term(text: str) -> list[str]:
    """Product profiles named by one <term> title such as 'Atlas A3 训练系列产品/Atlas A3 推理系列产品'."""
    found: set[str] = set()
    for part in re.split(r"[/、]", text):
        title = part.strip()
        if re.search(r"Atlas\s*A2", title):
            found.add("a2")
        elif re.search(r"Atlas\s*A3", title):
            found.add("a3")
        elif "950" in title:
            found.add("950")
        elif re.fullmatch(r"Atlas\s*训练系列产品", title):
            found.add("910a")
        elif re.fullmatch(r"Atlas\s*推理系列(产品|加速卡产品)", title):
            found.add("310p")
    return sorted(found)


def products_in_hardware_series(title: str) -> list[str]:
    """Product profiles named by one row of a torch_npu README's English "Hardware support" table, such as
    'Atlas A2 Training series products'. Inference servers of a training chip ('Atlas 800I A2 Inference
    product') name no training profile."""
    if re.search(r"Atlas\s*A2\s+Training", title, re.I):
        return ["a2"]
    if re.search(r"Atlas\s*A3\s+Training", title, re.I):
        return ["a3"]
    if "950" in title:
        return ["950"]
    if re.fullmatch(r"Atlas\s+Training\s+series\s+products?", title.strip(), re.I):
        return ["910a"]
    if re.fullmatch(r"Atlas\s+Inference\s+series\s+products?", title.strip(), re.I):
        return ["310p"]
    return []


def normalize_dtype(word: str) -> str | None:
    key = word.strip().strip("`").lower()
    if key.startswith("torch."):
        key = key[len("torch."):]
    return DTYPE_ALIASES.get(key)
