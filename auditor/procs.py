"""Nothing the tool starts outlives it: process groups, parent-death watches and signal handling.

- The child that runs user code (auditor.sandbox) leads its own process group, so one killpg reaches
  every process the user's code started (DataLoader workers, subprocesses) unless they left the group
  themselves; the parent sweeps the group on every exit path.
- Children watch their parent: when it dies (even by SIGKILL, where no cleanup code runs) a child kills
  its own group (sandbox) or itself (static pool workers, via PR_SET_PDEATHSIG on Linux).
- A process that leaves the group (`setsid`, a double fork into a new session) is still a descendant:
  on Linux the supervising process and the child are child subreapers (PR_SET_CHILD_SUBREAPER), so
  such a process, once orphaned, is re-parented to them instead of init, and `kill_descendants` walks
  the parent links in /proc and kills (and reaps) every descendant left. Elsewhere: the group only.
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
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


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


def _prctl(option: int, arg, *rest: int) -> int | None:
    """prctl(2) on Linux; None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, arg, *rest)
    except (OSError, AttributeError):
        return None


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Linux: the kernel sends `sig` to this process when its parent exits. False where unsupported."""
    return _prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def set_child_subreaper(on: bool = True) -> bool | None:
    """Linux: orphaned descendants are re-parented to this process (not init) while on. Returns the
    previous setting, None where unsupported."""
    import ctypes

    previous = ctypes.c_int(0)
    if _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0) != 0:
        return None
    if _prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        return None
    return bool(previous.value)


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process, from /proc (empty where there is no /proc)."""
    table: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue                                     # gone meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()     # the command name may hold spaces and ')'
        if len(fields) > 1:
            table[int(name)] = (int(fields[1]), fields[0].decode())
    return table


def descendants(pid: int, exempt: frozenset[int] | set[int] = frozenset(),
                table: dict[int, tuple[int, str]] | None = None) -> list[int]:
    """Descendants of pid (zombies included) by the parent links in /proc, leaving out the subtrees of
    `exempt`."""
    children: dict[int, list[int]] = {}
    for child, (parent, _state) in (_process_table() if table is None else table).items():
        children.setdefault(parent, []).append(child)
    out, todo = [], [c for c in children.get(pid, []) if c not in exempt]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(c for c in children.get(current, []) if c not in exempt)
    return out


def kill_descendants(exempt: frozenset[int] | set[int] = frozenset(), rounds: int = 50) -> int:
    """SIGKILL every descendant of this process outside `exempt` (and their subtrees), reap those that
    are (or become, as a subreaper) our children, and repeat while killing uncovers more. Returns how
    many were killed. Linux (/proc); elsewhere nothing is found and 0 is returned."""
    me, killed = os.getpid(), set()
    for _ in range(rounds):
        table = _process_table()
        tree = descendants(me, exempt, table)
        live = [p for p in tree if table[p][1] not in "ZX"]
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        _reap(set(tree))                 # ours are collected; others' are their (dying) parents' to reap
        if not live and not any(table[p][0] == me for p in tree):
            break
        time.sleep(0.02)
    return len(killed)


def _reap(pids: set[int], wait: float = 2.0) -> None:
    """Collect the exit status of those of pids that are our children (no zombies left behind)."""
    deadline = time.monotonic() + wait
    pending = set(pids)
    while pending:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:                      # not our child (or already reaped)
                pending.discard(pid)
                continue
            if done:
                pending.discard(pid)
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def watch_parent(parent_pid: int, *, whole_group: bool, interval: float = 0.5) -> None:
    """A daemon thread that kills this process (and, with whole_group, its process group) once the
    parent is gone: portable, and it also reaches the processes the user's code started."""
    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                if whole_group:
                    kill_descendants(rounds=5)            # those that left the group too (setsid)
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
