"""What we migrate to: a torch_npu release line and an Ascend product."""
from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.data import load_table

# Product profile names (the CLI vocabulary) and the spellings users type for them.
PRODUCTS = ("a2", "a3", "950", "910a", "310p")
PRODUCT_ALIASES = {
    "a2": "a2", "910b": "a2", "atlas-a2": "a2", "ascend910b": "a2",
    "a3": "a3", "910c": "a3", "910_93": "a3", "91093": "a3", "atlas-a3": "a3", "ascend910c": "a3",
    "950": "950", "ascend950": "950", "950dt": "950", "950pr": "950",
    "910a": "910a", "910": "910a", "ascend910": "910a", "ascend910a": "910a",
    "310p": "310p", "ascend310p": "310p",
}
PRODUCT_TITLES = {
    "a2": "Atlas A2 training series (Ascend 910B)",
    "a3": "Atlas A3 training series / super-node (Ascend 910C, 910_93)",
    "950": "Ascend 950",
    "910a": "Atlas training series (Ascend 910)",
    "310p": "Atlas inference series (Ascend 310P)",
}
DEFAULT_PRODUCT = "a2"


class TargetError(ValueError):
    """A --torch-npu or --product value we cannot map; the CLI turns it into exit 2."""


def normalize_product(name: str | None) -> str:
    if name is None:
        return DEFAULT_PRODUCT
    key = name.strip().lower().replace(" ", "")
    if key.startswith("atlas") and key not in PRODUCT_ALIASES:
        key = key.replace("atlas", "atlas-", 1)
    if key in PRODUCT_ALIASES:
        return PRODUCT_ALIASES[key]
    raise TargetError(f"unknown Ascend product {name!r}; choose one of {', '.join(PRODUCTS)} "
                      "(aliases: 910b, 910c, 910_93, 910)")


def normalize_line(version: str | None, lines: list[str]) -> str:
    """Map '2.5.1', 'v2.5', '2.5.1.post2' or '2.5' to the torch_npu line 'v2.5'; None -> newest."""
    if not lines:
        raise TargetError("no coverage tables are installed (op_tables/ is empty)")
    if version is None:
        return lines[-1]
    m = re.match(r"^v?(\d+)\.(\d+)", version.strip())
    if not m:
        raise TargetError(f"cannot read torch_npu version {version!r}; expected e.g. 2.5.1 or v2.5")
    line = f"v{m.group(1)}.{m.group(2)}"
    if line not in lines:
        raise TargetError(f"torch_npu {version} (line {line}) is not covered; known lines: {', '.join(lines)}")
    return line


@dataclass(frozen=True, slots=True)
class Target:
    torch_npu: str   # a line such as 'v2.14'
    product: str     # one of PRODUCTS

    def describe(self) -> str:
        return f"torch_npu {self.torch_npu} on {PRODUCT_TITLES[self.product]}"

    def to_dict(self) -> dict[str, str]:
        return {"torch_npu": self.torch_npu, "product": self.product}


def available_lines() -> list[str]:
    """torch_npu lines the coverage tables cover, oldest first: ['v2.1', ..., 'v2.15']."""
    return list(load_table("index.json")["lines"])


def resolve_target(torch_npu: str | None = None, product: str | None = None) -> Target:
    return Target(normalize_line(torch_npu, available_lines()), normalize_product(product))
