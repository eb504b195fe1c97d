"""Bad input never stops the audit: each bad file is reported under errors, the others are audited,
the exit code follows the findings, and no traceback reaches the user."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.cli import main
from auditor.rules import load_rules
from auditor.static import StaticEngine

GOOD = "import torch\nmodel = Net().cuda()\n"


def audit_json(capsys, *args: str) -> tuple[int, dict]:
    code = main([*args, "--format", "json", "--no-cache", "--jobs", "1"])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def _errors_by_path(doc):
    assert all(set(e) == {"path", "kind", "message", "line"} for e in doc["errors"])
    return {e["path"]: f'{e["kind"]}: {e["message"]}' for e in doc["errors"]}


def test_syntax_error_is_reported_and_others_audited(tree, capsys):
    (tree / "broken.py").write_text("def f(:\n    pass\n")
    code, doc = audit_json(capsys, str(tree), "--fail-on", "warning")
    assert code == 1                              # good.py's finding still fails the build
    assert [f["path"] for f in doc["findings"]] == ["good.py"]
    assert "syntax" in _errors_by_path(doc)["broken.py"]


# A Python 2 era training script (PSMNet's finetune.py style): the loop body indents with a tab, the lines after it
# with eight spaces; Python 2 read both as 8 columns, Python 3 raises TabError
PY2_TABS = (
    "from __future__ import print_function\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "model = nn.DataParallel(Net())\n"
    "model.cuda()\n"
    "\n"
    "def train(imgL, imgR, disp_L):\n"
    "\tmodel.train()\n"
    "\timgL, imgR = imgL.cuda(), imgR.cuda()\n"
    "        disp_true = disp_L.cuda()\n"
    "\treturn model(imgL, imgR) - disp_true\n"
    "\n"
    "for epoch in range(10):\n"
    "\tloss = train(*batch)\n"
    "\ttorch.cuda.empty_cache()\n"
)


def test_tab_indentation_python_3_rejects_is_audited_as_python_2_read_it(tree, capsys):
    (tree / "finetune.py").write_text(PY2_TABS)
    (tree / "broken.py").write_text("def f(:\n\tpass\n        pass\n")     # a syntax error besides the tabs
    code, doc = audit_json(capsys, str(tree), "--fail-on", "never")
    errors = _errors_by_path(doc)
    assert code == 2                                   # both files stay errors: Python 3 runs neither
    assert "syntax" in errors["finetune.py"] and "8 columns" in errors["finetune.py"]
    assert "8 columns" not in errors["broken.py"]
    found = {(f["line"], f["symbol"]) for f in doc["findings"] if f["path"] == "finetune.py"}
    assert {(6, "cuda"), (10, "cuda"), (11, "cuda"), (16, "torch.cuda.empty_cache")} <= found
    assert not any(f["path"] == "broken.py" for f in doc["findings"])
    # columns count the expanded indentation, so nothing in the file is rewritten by `audit fix`
    assert all(f["fix"] == "none" for f in doc["findings"] if f["path"] == "finetune.py")
    code, doc = audit_json(capsys, str(tree / "finetune.py"), "--fail-on", "never", "--ignore-errors")
    assert code == 0 and doc["findings"]


# A test script whose author's editor showed tabs 4 columns wide (CDCN's FAS challenge scripts' shape): a tab-indented
# line inside a block of 4-space lines. Python 2 (tab = 8 columns) reports an unexpected indent, Python 3 a TabError;
# read at 4 columns the file is consistent
EDITOR_TABS = (
    "import torch\n"
    "from models.CDCNs import Conv2d_cd, CDCNpp\n"
    "\n"
    "def train_test():\n"
    "    print(\"test:\\n \")\n"
    "    #model = CDCNpp( basic_conv=Conv2d_cd, theta=0.7)\n"
    "\tmodel = CDCNpp( basic_conv=Conv2d_cd, theta=args.theta)\n"
    "    model.load_state_dict(torch.load('CDCNpp_P1_07/CDCNpp_P1_07_30.pkl'))\n"
    "    model = model.cuda()\n"
    "    for i, sample_batched in enumerate(dataloader_val):\n"
    "\t\tinputs = sample_batched['image_x'].cuda()\n"
    "        map_x = model(inputs)\n"
)


def test_tab_indentation_no_python_compiles_is_read_at_its_editors_width(tree, capsys):
    (tree / "test_CDCNpp_model1.py").write_text(EDITOR_TABS)
    (tree / "mixed.py").write_text("def f():\n    if x:\n\tpass\n      pass\n")   # consistent at neither width
    code, doc = audit_json(capsys, str(tree), "--fail-on", "never")
    errors = _errors_by_path(doc)
    assert code == 2                                   # still an error: no interpreter compiles it as written
    assert "4 columns" in errors["test_CDCNpp_model1.py"] and "8 columns" not in errors["test_CDCNpp_model1.py"]
    assert "columns" not in errors["mixed.py"]
    found = {(f["line"], f["symbol"]) for f in doc["findings"] if f["path"] == "test_CDCNpp_model1.py"}
    assert {(9, "cuda"), (11, "cuda")} <= found
    assert all(f["fix"] == "none" for f in doc["findings"] if f["path"] == "test_CDCNpp_model1.py")


# neural-motifs' proposal_assignments_rel.py (pre-1.0 PyTorch, Python 2): `async=True` is a keyword argument there,
# a syntax error in Python 3.7+ where `async` is a keyword
PY2_ASYNC = (
    "import numpy as np\n"
    "import torch\n"
    "\n"
    "def proposal_assignments_rel(rpn_rois, gt_boxes, fg_thresh=0.5):\n"
    "    rois = rpn_rois.data.cpu().numpy()  # async=True in a comment stays as written\n"
    "    rois = torch.FloatTensor(np.concatenate(rois, 0)).cuda(rpn_rois.get_device(), async=True)\n"
    "    labels = torch.LongTensor(rois[:, 0]).cuda(\n"
    "        rpn_rois.get_device(), async=True)\n"
    "    return rois, labels, 'async=True'\n"
)


def test_async_keyword_argument_python_3_rejects_is_audited_as_python_2_read_it(tree, capsys):
    (tree / "proposal_assignments_rel.py").write_text(PY2_ASYNC)
    (tree / "py2_print.py").write_text("x = y.cuda(async=True)\nprint 'done'\n")    # other Python 2 syntax besides
    (tree / "py37.py").write_text("async = True\nm = m.cuda()\n")      # `async` assigned: not a keyword argument
    code, doc = audit_json(capsys, str(tree), "--fail-on", "never")
    errors = _errors_by_path(doc)
    assert code == 2
    assert "syntax" in errors["proposal_assignments_rel.py"] and "`async=`" in errors["proposal_assignments_rel.py"]
    assert "`async=`" not in errors["py2_print.py"] and "`async=`" not in errors["py37.py"]
    found = {(f["line"], f["symbol"]) for f in doc["findings"] if f["path"] == "proposal_assignments_rel.py"}
    assert {(6, "cuda"), (7, "cuda")} <= found
    assert not any(f["path"] in ("py2_print.py", "py37.py") for f in doc["findings"])
    assert all(f["fix"] == "none" for f in doc["findings"] if f["path"] == "proposal_assignments_rel.py")


def test_non_utf8_without_cookie_is_an_error_with_cookie_is_audited(tree, capsys):
    (tree / "latin_bad.py").write_bytes("x = 'caf\xe9'\nm = m.cuda()\n".encode("latin-1"))
    (tree / "latin_ok.py").write_bytes("# -*- coding: latin-1 -*-\nx = 'caf\xe9'\nm = m.cuda()\n".encode("latin-1"))
    code, doc = audit_json(capsys, str(tree))
    paths = {f["path"] for f in doc["findings"]}
    assert "latin_ok.py" in paths and "latin_bad.py" not in paths
    assert "encoding" in _errors_by_path(doc)["latin_bad.py"]


def test_binary_and_empty_files(tree, capsys):
    (tree / "blob.py").write_bytes(b"\x7fELF\x00\x00\x01\x02" * 100)
    (tree / "empty.py").write_bytes(b"")
    code, doc = audit_json(capsys, str(tree))
    errs = _errors_by_path(doc)
    assert "binary" in errs["blob.py"]
    assert "empty.py" not in errs
    assert doc["summary"]["files_scanned"] == 3


def test_fifty_thousand_line_file_is_audited(tree, capsys):
    body = "".join(f"x{i} = {i}\n" for i in range(50_000)) + "y = t.cuda()\n"
    (tree / "huge.py").write_text(body)
    code, doc = audit_json(capsys, str(tree / "huge.py"))
    assert [f["line"] for f in doc["findings"]] == [50_001]
    assert doc["errors"] == []


def test_file_over_the_size_limit_is_reported(tree, capsys):
    (tree / "big.py").write_text("# padding\n" * 200_000)
    code, doc = audit_json(capsys, str(tree), "--max-file-size", "1")
    assert "too-large" in _errors_by_path(doc)["big.py"]


def test_symlink_loop_and_broken_link(tree, capsys):
    sub = tree / "pkg"
    sub.mkdir()
    (sub / "mod.py").write_text(GOOD)
    os.symlink("..", sub / "loop")                  # pkg/loop -> tree: a cycle
    os.symlink("missing.py", tree / "dangling.py")
    code, doc = audit_json(capsys, str(tree))
    errs = _errors_by_path(doc)
    assert any("symlink-loop" in e for e in errs.values())
    assert "unreadable" in errs["dangling.py"]
    assert sorted({f["path"] for f in doc["findings"]}) == ["good.py", "pkg/mod.py"]


def test_unreadable_file(tree, capsys, monkeypatch):
    (tree / "secret.py").write_text(GOOD)
    import auditor.discover

    real_open = os.open

    def deny(path, *args, **kwargs):      # root ignores chmod 000: refuse the open instead
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr(auditor.discover.os, "open", deny)
    code, doc = audit_json(capsys, str(tree))
    assert "Permission denied" in _errors_by_path(doc)["secret.py"]
    assert {f["path"] for f in doc["findings"]} == {"good.py"}


def test_missing_path_and_bad_flag_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([str(tmp_path), "--format", "xml"]) == 2
    assert main([str(tmp_path), "--product", "h100"]) == 2
    assert "unknown Ascend product" in capsys.readouterr().err


def test_no_traceback_from_the_command_line(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe\x00garbage(((")
    proc = subprocess.run([sys.executable, "-m", "auditor.cli", str(tmp_path), "--no-cache"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2            # a file that could not be audited: exit 2 (README, CI section)
    assert "could not be audited" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


ENGINE = StaticEngine(load_rules())
FRAGMENTS = [
    "import torch\n", "import torch.cuda as tc\n", "from torch import cuda\n", "x = y.cuda()\n",
    'd = f"cuda:{r}"\n', "tc.synchronize()\n", "def f(a):\n    return a\n", "class C:\n    pass\n",
    "if x:\n", "    pass\n", '"""doc cuda"""\n', "os.environ['NCCL_DEBUG'] = 'INFO'\n", "(", ")", ":", "\t",
    "lambda: cuda\n", "@torch.cuda.amp.custom_fwd\n", "'''", '"', "\\\n", "async def g():\n    await h()\n",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25))
def test_fuzz_mutated_sources_never_raise(parts):
    result = ENGINE.analyze_bytes("".join(parts).encode(), "fuzz.py")
    assert result.error is None or result.error.kind in ("syntax", "encoding")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_random_bytes_never_raise(data):
    result = ENGINE.analyze_bytes(data, "random.py")
    assert result.error is None or result.error.kind in ("syntax", "encoding", "binary")


def test_a_folder_linked_inside_the_tree_is_audited_under_its_own_path(tree, capsys):
    # wetts' shape: examples/<recipe>/vits -> ../../wetts/vits; the link sorts before the real folder.
    real = tree / "wetts" / "vits"
    real.mkdir(parents=True)
    (real / "train.py").write_text(GOOD)
    recipe = tree / "examples" / "aishell3"
    recipe.mkdir(parents=True)
    os.symlink("../../wetts/vits", recipe / "vits")
    code, doc = audit_json(capsys, str(tree))
    assert sorted({f["path"] for f in doc["findings"]}) == ["good.py", "wetts/vits/train.py"]
    assert doc["errors"] == []          # an alias of a walked folder is no loop


def test_a_folder_linked_from_outside_the_tree_is_still_audited(tmp_path, capsys):
    outside = tmp_path / "shared_models"
    outside.mkdir()
    (outside / "net.py").write_text(GOOD)
    tree = tmp_path / "proj"
    tree.mkdir()
    os.symlink(outside, tree / "models")
    code, doc = audit_json(capsys, str(tree))
    assert sorted({f["path"] for f in doc["findings"]}) == ["models/net.py"]
