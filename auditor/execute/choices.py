"""Discrete choices inside a module: top-k (MoE routing), argmax / argmin, sort, max along a dim.

A module that picks by value turns a rounding error into a different branch: bf16 router logits that
differ in the last bit pick another expert, and the module's output then differs by a whole expert's
contribution, far beyond any rounding tolerance. The verdict should say so. While execute mode re-runs
a module alone (golden, then candidate on the same rounded inputs), `ChoiceRecorder` keeps the indices
these ops return, in call order; `compare_choices` pairs the two runs' calls and measures the share of
rows whose choice differs (for top-k: the chosen set, in any order).
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# op name -> index of the indices tensor in its output (None: the output is the indices)
CHOICE_OPS = {"topk": 1, "argmax": None, "argmin": None, "sort": 1, "argsort": None, "max": 1, "min": 1}


class ChoiceRecorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, torch.Tensor]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func._opname
        if name in CHOICE_OPS and not (name in ("max", "min") and not isinstance(out, tuple)):
            position = CHOICE_OPS[name]
            indices = out if position is None else out[position]
            if isinstance(indices, torch.Tensor) and indices.numel():
                self.calls.append((name, indices.detach().to("cpu", copy=True)))
        return out


def compare_choices(golden: list, candidate: list) -> dict | None:
    """The call with the largest share of flipped rows: {"op", "flipped", "rows", "share", "k"}; None
    when no choice differs (or the two runs made different calls)."""
    if not golden or len(golden) != len(candidate):
        return None
    worst = None
    for (g_op, g), (c_op, c) in zip(golden, candidate):
        if g_op != c_op or g.shape != c.shape:
            continue
        if g.dim() == 0:
            g, c = g.reshape(1, 1), c.reshape(1, 1)
        rows_g, rows_c = g.reshape(-1, g.shape[-1]), c.reshape(-1, c.shape[-1])
        if g_op in ("topk", "sort", "argsort"):
            differ = (rows_g.sort(dim=-1).values != rows_c.sort(dim=-1).values).any(dim=-1)
            rows, k = rows_g.shape[0], rows_g.shape[-1]
        else:  # one choice per element
            differ = (g != c).reshape(-1)
            rows, k = differ.numel(), 1
        flipped = int(differ.sum())
        if flipped and (worst is None or flipped / rows > worst["share"]):
            worst = {"op": g_op, "flipped": flipped, "rows": rows, "share": round(flipped / rows, 6), "k": k}
    return worst


def describe(flip: dict, amp: str, module: str) -> str:
    """'bf16 rounding flips the top-2 choice (expert routing) for 12.5% of 64 rows (aten::topk in `gate`)'."""
    what = {"topk": f"top-{flip['k']} choice (e.g. MoE expert routing)", "argmax": "argmax choice",
            "argmin": "argmin choice", "max": "max index", "min": "min index", "sort": "sort order",
            "argsort": "sort order"}.get(flip["op"], flip["op"])
    return (f"{amp} rounding of the scores flips the {what} for {flip['share']:.1%} of {flip['rows']} rows "
            f"(aten::{flip['op']} in `{module or '(model)'}`)")
