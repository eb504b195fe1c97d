"""Isolation: user code runs in a spawned child with a time limit; errors show only the user's frames."""
import time
from pathlib import Path

import pytest

from auditor.sandbox import SandboxError, run_in_child

FIXTURES = Path(__file__).parent / "fixtures" / "trace"


def build_entry(source, entry=None):
    """Runs in the child: import the user's file and call its entry."""
    from auditor.entry import resolve_entry

    spec = resolve_entry(Path(source), entry)()
    return type(spec.model).__name__, sum(p.numel() for p in spec.model.parameters())


def crash_hard():
    import os

    os._exit(3)


def test_result_comes_back():
    assert run_in_child(build_entry, {"source": str(FIXTURES / "entry_forms.py")}, timeout=120) == \
        ("Classifier", 32 * 64 + 64 + 64 * 10 + 10)


def test_user_exception_has_only_user_frames():
    with pytest.raises(SandboxError) as info:
        run_in_child(build_entry, {"source": str(FIXTURES / "raises.py")}, timeout=120)
    err = info.value
    assert err.kind == "user-exception" and err.exc_type == "ValueError"
    assert err.message == "ValueError: width 30 must be a multiple of 8"
    assert 'raises.py", line 11, in audit_entry' in err.user_traceback
    assert 'raises.py", line 6, in build_layer' in err.user_traceback
    assert "auditor" not in err.user_traceback and "site-packages" not in err.user_traceback
    assert err.line[0].endswith("raises.py") and err.line[1] == 6


def test_entry_error_message_without_traceback():
    with pytest.raises(SandboxError) as info:
        run_in_child(build_entry, {"source": str(FIXTURES / "no_entry.py")}, timeout=120)
    assert info.value.exc_type == "EntryError" and info.value.user_traceback == ""
    assert "def audit_entry():" in info.value.message


def test_hang_is_killed_at_the_limit():
    start = time.monotonic()
    with pytest.raises(SandboxError) as info:
        run_in_child(build_entry, {"source": str(FIXTURES / "hangs.py")}, timeout=8)
    assert info.value.kind == "timeout" and "within 8 s" in info.value.message
    assert time.monotonic() - start < 20


def test_child_that_dies_is_a_crash():
    with pytest.raises(SandboxError) as info:
        run_in_child(crash_hard, {}, timeout=60)
    assert info.value.kind == "crash" and "status 3" in info.value.message
