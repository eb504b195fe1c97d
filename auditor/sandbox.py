"""Run user code in a child process with a time limit.

The child is started with the multiprocessing *spawn* context (a fresh interpreter: no state shared
with the auditor, safe with threads), so `func` must be a module-level function and `kwargs` and the
result picklable. The child's stdout is sent to stderr so user prints never corrupt machine output
(JSON, SARIF) on the parent's stdout.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import site
import sys
import sysconfig
import time
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

_AUDITOR_DIR = str(Path(__file__).resolve().parent)
# The standard library and installed packages (torch, transformers ...): never the user's frames.
_LIBRARY_DIRS = tuple(sorted({os.path.realpath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                              if (p := sysconfig.get_paths().get(key))}
                             | {os.path.realpath(p) for p in site.getsitepackages()}))


class SandboxError(Exception):
    """User code failed in the child: kind is 'timeout', 'user-exception' or 'crash'."""

    def __init__(self, kind: str, message: str, user_traceback: str = "",
                 exc_type: str = "", line: tuple[str, int] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.user_traceback = user_traceback
        self.exc_type = exc_type
        self.line = line  # (file, line) of the innermost user frame, when there is one

    def __str__(self) -> str:
        if self.user_traceback:
            return f"{self.message}\n{self.user_traceback}"
        return self.message


def is_user_frame(filename: str) -> bool:
    """A frame in the user's code: not the auditor, not the standard library or installed packages."""
    if filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    if real.startswith(_AUDITOR_DIR + os.sep):
        return False
    return not any(real.startswith(d + os.sep) for d in _LIBRARY_DIRS)


def format_user_traceback(exc: BaseException) -> tuple[str, tuple[str, int] | None]:
    """The exception's traceback restricted to user frames, in the usual Python layout."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_user_frame(f.filename)]
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames) if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    innermost = (frames[-1].filename, frames[-1].lineno or 0) if frames else None
    return "".join(lines).rstrip("\n"), innermost


def _child_main(conn, func: Callable, kwargs: dict, parent_pid: int | None = None) -> None:
    # A group of our own: the parent's killpg reaches whatever the user's code starts, and a Ctrl-C in
    # the terminal goes to the parent, which then stops the whole group.
    try:
        os.setsid()
    except OSError:
        pass
    from auditor.procs import set_child_subreaper

    set_child_subreaper(True)     # what the user's code starts and orphans (a double fork) stays ours
    if parent_pid is not None:
        from auditor.procs import watch_parent

        watch_parent(parent_pid, whole_group=True)   # parent killed (even -9): the group goes too
    # spawn leaves "spawn" as this interpreter's start method; the user's code (a DataLoader with
    # workers) expects the platform default it would get when run on its own.
    mp.set_start_method(None, force=True)
    os.dup2(2, 1)  # user prints go to stderr
    sys.stdout = sys.stderr
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        result = func(**kwargs)
    except BaseException as exc:  # noqa: BLE001 - everything the user's code raises is reported
        user_tb, where = format_user_traceback(exc)
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        payload = ("error", type(exc).__name__, message, user_tb, where)
        # Our own errors that are meant for the user (EntryError) keep their message without a traceback.
        if getattr(exc, "user_facing", False) or type(exc).__name__ == "EntryError":
            payload = ("error", type(exc).__name__, str(exc), "", None)
        conn.send(payload)
    else:
        try:
            conn.send(("ok", result))
        except Exception as exc:  # noqa: BLE001 - an unpicklable result is our bug, say so plainly
            conn.send(("error", type(exc).__name__, f"result could not be sent back: {exc}", "", None))
    finally:
        conn.close()


PROGRESS_EVERY_S = 15.0


def run_in_child(func: Callable, kwargs: dict, timeout: float, label: str | None = None) -> Any:
    """Call func(**kwargs) in a spawned child; return its result or raise SandboxError.

    The child is not a daemonic multiprocessing process (those may not start children, which breaks a
    DataLoader with workers); it leads its own process group, and that group is killed on every way out
    of this function (result, error, timeout, Ctrl-C, SIGTERM turned into an exception by the CLI).
    On Linux this process is a child subreaper meanwhile, so descendants that left the group (setsid,
    a double fork) come back to it when orphaned, and every descendant the run left is killed too.
    With `label`, progress lines go to stderr while the child runs.
    """
    from auditor.procs import descendants, kill_descendants, kill_group, set_child_subreaper

    exempt = set(descendants(os.getpid()))      # processes of ours from before (and their subtrees)
    was_subreaper = set_child_subreaper(True)
    ctx = mp.get_context("spawn")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(child_conn, func, kwargs, os.getpid()), daemon=False)
    try:
        with _main_not_reimported():
            proc.start()
    finally:
        exempt |= _multiprocessing_helpers()
    child_conn.close()
    started = time.monotonic()
    answered = False
    if label:
        print(f"audit: {label}: running your code in a child process (pid {proc.pid}, "
              f"time limit {timeout:g} s)", file=sys.stderr, flush=True)
    try:
        while True:
            waited = time.monotonic() - started
            if parent_conn.poll(max(0.0, min(PROGRESS_EVERY_S, timeout - waited))):
                break
            waited = time.monotonic() - started
            if waited >= timeout:
                raise SandboxError("timeout", f"user code did not finish within {timeout:g} s and was stopped "
                                              "(raise the limit with --timeout)")
            if label:
                print(f"audit: {label}: still running ({waited:.0f} s of {timeout:g} s)", file=sys.stderr, flush=True)
        try:
            message = parent_conn.recv()
            answered = True
        except (EOFError, OSError):
            proc.join(5)
            raise SandboxError("crash", _crash_message(proc.exitcode)) from None
    finally:
        parent_conn.close()
        if answered:
            proc.join(2)          # a child that has answered exits on its own; give it a moment
        if proc.pid is not None:  # started: the child, if still there, and every process it left in its group
            kill_group(proc.pid)
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        kill_descendants(exempt)  # those that left the group (setsid) and were re-parented to us
        if was_subreaper is False:
            set_child_subreaper(False)
    if label:
        print(f"audit: {label}: finished in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    if message[0] == "ok":
        return message[1]
    _, exc_type, text, user_tb, where = message
    raise SandboxError("user-exception", text, user_tb, exc_type, where)


def _multiprocessing_helpers() -> set[int]:
    """multiprocessing's own long-lived helper processes (the resource tracker spawn starts): not the
    user's, and killing them would only make multiprocessing start them again."""
    from multiprocessing import resource_tracker

    pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    return {pid} if isinstance(pid, int) else set()


@contextmanager
def _main_not_reimported():
    """Keep spawn from re-running the parent's __main__ in the child.

    `func` lives in an importable module, so the child never needs __main__; re-running it would
    execute a script's top level again (and fail outright without an `if __name__ == "__main__"` guard).
    """
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
        yield
    finally:
        if main is not None:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


def _crash_message(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        import signal

        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"the child process running user code was killed by {name}{hint}"
    return f"the child process running user code exited with status {exitcode} before returning a result"
