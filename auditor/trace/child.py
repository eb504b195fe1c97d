"""The function the sandbox runs in the child. It lives in a torch-free module so that the parent
can hand it to multiprocessing without importing torch itself."""
from __future__ import annotations


def run_trace(source: str | None, entry: str | None, hf_config: str | None, amp: str | None,
              seq_len: int | None = None, batch: int | None = None, layers: int | str | None = None) -> dict:
    from auditor.trace.record import trace_step

    return trace_step(source, entry, hf_config, amp, seq_len=seq_len, batch=batch, layers=layers)
