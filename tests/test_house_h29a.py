"""House work h29a (no behaviour change): one loop for another backend's files (backends.discount_owned), a note per
finding in discount_findings (npu_native's Ascend sub-packages), one way to write a per-file fact only when it is
non-empty (project_imports.put_facts). Each keeps what the code it replaced did."""
from __future__ import annotations

from types import SimpleNamespace

from auditor.findings import Finding
from auditor.static.backends import discount_findings, discount_owned, undiscounted
from auditor.static.project_imports import put_facts, tree_facts
from auditor.static.unreached_defs import reach_facts


def _finding(**kw) -> Finding:
    base = dict(code="NPU003", name="cuda-device-string", category="device", severity="error", effort="auto",
                path="a.py", line=3, col=1, end_line=3, end_col=7, message="`cuda` is CUDA's", substitution=None,
                fix="safe", source="static", symbol="cuda", data={"replace": "npu"})
    return Finding(**{**base, **kw})


def test_put_facts_writes_only_non_empty_facts_in_order():
    out = {"top": []}
    put_facts(out, dead=[], flags=[[1, 2]], runs=True, shim=False, lazy={}, names={"": ["x"]})
    assert list(out) == ["top", "flags", "runs", "names"]


def test_discount_owned_lowers_only_the_owned_files():
    other = SimpleNamespace(path="pkg/mlu_ops.py", findings=[_finding(), _finding(category="host", name="h")])
    mine = SimpleNamespace(path="train.py", findings=[_finding()])
    changed = discount_owned([other, mine], {"pkg/mlu_ops.py": "torch_mlu"}, lambda via: f"it imports {via}",
                             lower=undiscounted, drop=lambda f: f.category == "host")
    assert changed == 2 and len(other.findings) == 1
    assert other.findings[0].data["context"] == "other-backend"
    assert other.findings[0].message == "`cuda` is CUDA's (it imports torch_mlu)"
    assert mine.findings[0].severity == "error"


def test_discount_findings_note_per_finding():
    r = SimpleNamespace(path="t.py", findings=[_finding(symbol="deep_ep.Buffer", category="third_party"), _finding()])
    n = discount_findings(r, "ascend-package", lambda f: f"`{f.symbol.split('.')[0]}` is the tree's own package",
                          lower=lambda f: f.category == "third_party")
    assert n == 1 and r.findings[0].message.endswith("(`deep_ep` is the tree's own package)")
    assert r.findings[1].severity == "error"


def test_fact_dictionaries_keep_their_keys():
    src = (b"import torch\nfrom .ops import *\nfrom . import cfg\n"
           b"def probe():\n    try:\n        import flash_attn\n    except ImportError:\n        return False\n"
           b"if __name__ == '__main__':\n    probe()\n")
    # as the base tree (7ce35852) wrote it, keys in the same order
    assert list(reach_facts(src).items()) == [
        ("top", [["probe", 4, 8, False]]), ("dead", [[9, 10]]),
        ("names", {"": [".torch"], "probe": [".flash_attn", "ImportError"]}), ("runs", True),
        ("relative", [[1, "ops"]]), ("launches", []), ("modules", ["*", "cfg", "flash_attn", "ops", "torch"]),
        ("whole", ["__main__", "cfg", "flash_attn", "torch"]), ("stars", [[1, "ops"]]), ("probes", [[6, 6]]),
        ("imports_from", [":cfg", "ops:*"])]
    assert tree_facts(b"import torch\n", "a.py") == {}
    assert tree_facts(b"from torch_npu.contrib import transfer_to_npu\n", "a.py") == {"shim": True, "top_npu": True}
