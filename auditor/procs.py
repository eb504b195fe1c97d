"""Nothing the tool starts outlives it: process groups, parent-death watches and signal handling.

- The child that runs user code (auditor.sandbox) leads its own process group, so one killpg reaches
  every process the user's code started (DataLoader workers, subprocesses) unless they left the group
  themselves; the parent sweeps the group on every exit path.
- Children watch their parent: when it dies (even by SIGKILL, where no cleanup code runs) a child kills
  its own group (sandbox) or itself (static pool workers, via PR_SET_PDEATHSIG on Linux).
- SIGTERM and SIGHUP become a `Terminated` exception in the CLI, so `finally` blocks run as for Ctrl-C.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

_PR_SET_PDEATHSIG = 1


class Terminated(BaseException):
    """The CLI got SIGTERM or SIGHUP (a CI cancel, `timeout`): unwind, clean up, exit 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


@contextmanager
def terminate_on_signals():
    """Turn SIGTERM / SIGHUP into Terminated for the duration (main thread only; else a no-op)."""
    def handler(signum, _frame):
        raise Terminated(signum)

    saved = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            saved[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):       # not the main thread
            pass
    try:
        yield
    finally:
        for sig, old in saved.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError):
                pass


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Linux: the kernel sends `sig` to this process when its parent exits. False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_parent(parent_pid: int, *, whole_group: bool, interval: float = 0.5) -> None:
    """A daemon thread that kills this process (and, with whole_group, its process group) once the
    parent is gone: portable, and it also reaches the processes the user's code started."""
    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                if whole_group:
                    try:
                        os.killpg(os.getpgrp(), signal.SIGKILL)
                    except OSError:
                        pass
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(interval)

    if os.getppid() != parent_pid:          # the parent died before we got here
        watch()
    threading.Thread(target=watch, name="npu-audit-parent-watch", daemon=True).start()


def kill_group(pgid: int) -> None:
    """SIGKILL every process left in a group (no error when none is)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1
