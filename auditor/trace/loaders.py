"""DataLoaders with worker processes under the tracer: their batches are built in the traced process.

A fake tensor belongs to the FakeTensorMode of the process that made it. A DataLoader worker is another
process: its collate moves each batch into shared memory (`storage._new_shared`), which a tensor with no
real storage cannot do, and nothing could carry a fake tensor back to the traced process anyway. So
while a step is traced every `torch.utils.data.DataLoader` (subclasses included: they call its
__init__) is built with `num_workers=0`: the same dataset, sampler, collate_fn, batch size and order;
the options that only mean something with workers (prefetch_factor, persistent_workers,
multiprocessing_context) are dropped and `worker_init_fn` is not called, because there is no worker.
Each such loader is recorded and the trace report says its workers ran in-process.

`--execute` needs none of this: real tensors cross process boundaries, so its workers run as written.
"""
from __future__ import annotations

import functools
import inspect
import sys
from types import FrameType
from contextlib import contextmanager
from typing import Iterator

_WORKER_ONLY = {"prefetch_factor": None, "persistent_workers": False, "multiprocessing_context": None}


def _user_site() -> str:
    """file:line of the innermost user frame on the stack (where the DataLoader is built)."""
    from auditor.sandbox import is_user_frame

    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if is_user_frame(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


@contextmanager
def workers_in_process() -> Iterator[list[dict]]:
    """While active, DataLoaders asking for worker processes load in-process; yields the list of
    {'site', 'num_workers', 'worker_init_fn'} records, one per such loader."""
    from torch.utils.data import DataLoader

    original = DataLoader.__init__
    signature = inspect.signature(original)
    changed: list[dict] = []

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return original(self, *args, **kwargs)     # DataLoader's own message for a wrong call
        workers = bound.arguments.get("num_workers", 0)
        if isinstance(workers, int) and workers > 0:
            changed.append({"site": _user_site(), "num_workers": workers,
                            "worker_init_fn": bound.arguments.get("worker_init_fn") is not None})
            bound.arguments["num_workers"] = 0
            for name, value in _WORKER_ONLY.items():
                if name in bound.arguments:
                    bound.arguments[name] = value
        return original(*bound.args, **bound.kwargs)

    DataLoader.__init__ = init  # type: ignore[method-assign]
    try:
        yield changed
    finally:
        DataLoader.__init__ = original  # type: ignore[method-assign]


def describe(records: list[dict], relative=lambda path: path) -> str:
    """The trace report's cell: the loaders whose workers ran in-process (fake tensors cannot cross
    processes), with the worker count each asked for."""
    sites = []
    for rec in records:
        path, _, line = rec["site"].rpartition(":")
        where = f"{relative(path)}:{line}" if path else "DataLoader"
        extra = ", worker_init_fn not called" if rec["worker_init_fn"] else ""
        sites.append(f"{where} num_workers={rec['num_workers']}{extra}")
    return "workers run in-process: " + "; ".join(sites)
