"""The function the sandbox runs in the child. It lives in a torch-free module so that the parent
can hand it to multiprocessing without importing torch itself."""
from __future__ import annotations

from typing import Any


def run_trace(source: str | None, entry: str | None, hf_config: str | None, amp: str | None,
              distributed: dict | None = None, seq_len: int | None = None, batch: int | None = None,
              layers: int | str | None = None) -> dict:
    from auditor.trace.record import trace_step

    sizes: dict[str, Any] = dict(seq_len=seq_len, batch=batch, layers=layers)
    if not distributed:
        return trace_step(source, entry, hf_config, amp, **sizes)
    from auditor.trace.distributed import traced_rank  # one rank of an N-rank job on the fake backend

    return traced_rank(distributed, lambda session: trace_step(source, entry, hf_config, amp, session=session,
                                                               **sizes))
