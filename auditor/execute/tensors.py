"""Walk the nested containers modules take and return (tuples, lists, dicts, ModelOutput-like mappings)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

import torch


def tensor_leaves(obj: Any) -> list[torch.Tensor]:
    """Every tensor in `obj`, depth first, in the order map_tensors visits them."""
    out: list[torch.Tensor] = []

    def keep(t: torch.Tensor) -> torch.Tensor:
        out.append(t)
        return t
    map_tensors(obj, keep)
    return out


def map_tensors(obj: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    """Rebuild `obj` with fn applied to every tensor; other leaves are kept as they are."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(map_tensors(v, fn) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(map_tensors(v, fn) for v in obj)
    if isinstance(obj, Mapping):
        items = {k: map_tensors(v, fn) for k, v in obj.items()}
        try:
            cls: Any = type(obj)       # a Mapping subclass: a dict, or a transformers ModelOutput
            return cls(**items) if hasattr(obj, "to_tuple") else cls(items)
        except TypeError:
            return items
    return obj


def float_leaves(obj: Any) -> list[torch.Tensor]:
    return [t for t in tensor_leaves(obj) if t.is_floating_point()]


def detach_clone(obj: Any, device: str | None = None) -> Any:
    """A snapshot that later in-place ops (ReLU(inplace=True), `out += identity`) cannot change."""
    return map_tensors(obj, lambda t: t.detach().to(device or t.device, copy=True))
