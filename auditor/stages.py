"""The staged-migration checklist (`audit stages`)."""
from __future__ import annotations

MODEL_SIZES = ("125m", "1b", "7b", "13b", "70b")


class StagesError(ValueError):
    pass


def checklist(model_size: str, product: str, *, nodes: int = 1, cards_per_node: int = 8, entry: str = "train.py") -> str:
    raise StagesError("not written yet")
