"""Extract msprobe's accuracy-comparison thresholds from a mindstudio-probe wheel into msprobe_thresholds.json.

    python op_tables/msprobe_thresholds.py [--wheel mindstudio_probe-26.2.0-....whl] [--version 26.2.0]

Without --wheel it runs `pip download --no-deps mindstudio-probe==VERSION` into a temporary folder. The
wheel is read as a zip file (msprobe is never imported or installed) and each value is taken from the
Python source with `ast`, so the JSON names the file and line every threshold came from. `audit compare`
(auditor/compare.py) reads only the JSON. Exit status 2 when the wheel cannot be fetched or a value is missing.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
OUT = HERE / "msprobe_thresholds.json"
CONST = "msprobe/core/common/const.py"
MULTI = "msprobe/core/compare/multiprocessing_compute.py"
SUMMARY = "msprobe/core/compare/utils.py"
INDICATOR = "msprobe/core/compare/indicator_analysis/algorithm.py"
STANDARD = "msprobe/pytorch/api_accuracy_checker/precision_standard/standard_config.py"
DIFF_YAML = "msprobe/core/compare/diff_analyze/diff_analyze_threshold.yaml"
DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


class Missing(Exception):
    pass


def _number(node: ast.AST) -> float:
    """A literal number or a power such as 2**-10."""
    value = ast.literal_eval(node) if not isinstance(node, ast.BinOp) else eval(  # noqa: S307 - literal arithmetic only
        compile(ast.Expression(node), "<threshold>", "eval"), {"__builtins__": {}})
    if not isinstance(value, (int, float)):
        raise Missing(f"not a number: {ast.dump(node)}")
    return float(value)


def _class_constants(source: str, cls: str, names: tuple[str, ...]) -> dict[str, tuple[float, int]]:
    """NAME = number assignments in the body of class `cls`: {name: (value, line)}."""
    tree = ast.parse(source)
    found: dict[str, tuple[float, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                        and stmt.targets[0].id in names:
                    found[stmt.targets[0].id] = (_number(stmt.value), stmt.lineno)
    return found


def _init_attributes(source: str, cls: str) -> dict[str, tuple[float, int]]:
    """self.NAME = number assignments in `cls.__init__`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                    out = {}
                    for stmt in fn.body:
                        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Attribute) \
                                and isinstance(stmt.value, (ast.Constant, ast.BinOp, ast.UnaryOp)):
                            try:
                                out[stmt.targets[0].attr] = (_number(stmt.value), stmt.lineno)
                            except (Missing, ValueError):
                                continue
                    return out
    raise Missing(f"class {cls} not found")


def _dtype_dict(source: str, cls: str, attr: str) -> tuple[dict[str, float], int]:
    """A class-level {torch.float16: 2**-10, ...} dict, keyed by our dtype names."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == attr:
                    out = {}
                    for key, value in zip(stmt.value.keys, stmt.value.values):
                        if isinstance(key, ast.Attribute) and key.attr in DTYPES:
                            out[DTYPES[key.attr]] = _number(value)
                    return out, stmt.lineno
    raise Missing(f"{cls}.{attr} not found")


def _line_of(source: str, text: str) -> int:
    for i, line in enumerate(source.splitlines(), 1):
        if text in line:
            return i
    raise Missing(f"{text!r} not found")


def extract(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        read = lambda name: z.read(name).decode("utf-8")
        const, multi, summary = read(CONST), read(MULTI), read(SUMMARY)
        indicator, standard, diff_yaml = read(INDICATOR), read(STANDARD), read(DIFF_YAML)
    names = ("COS_THRESHOLD", "MAX_ABS_ERR_THRESHOLD", "COS_MAX_THRESHOLD", "MAX_ABS_ERR_MAX_THRESHOLD", "MAGNITUDE",
             "BFLOAT16_EPS")
    c = _class_constants(const, "CompareConst", names)
    missing = [n for n in names if n not in c]
    if missing:
        raise Missing(f"{CONST}: {missing} not found")
    rel_err = _init_attributes(indicator, "RelativeErrChecker")
    rel_warn = _init_attributes(indicator, "RelativeWarnChecker")
    cos_warn = _init_attributes(indicator, "CosineWarnChecker")
    rtol, rtol_line = _dtype_dict(standard, "StandardConfig", "_rtol")
    small, small_line = _dtype_dict(standard, "StandardConfig", "_small_value")
    diff = yaml.safe_load(diff_yaml)
    src = lambda file, line: f"{file}:{line}"
    return {
        "real_data": {
            "doc": "msprobe compare, real-data mode: 'Accuracy Reached or Not' is No when (cosine < cos_threshold "
                   "and max_abs_err > max_abs_err_threshold) or cosine < cos_max_threshold or max_abs_err > "
                   "max_abs_err_max_threshold (check_accuracy)",
            "cos_threshold": c["COS_THRESHOLD"][0], "max_abs_err_threshold": c["MAX_ABS_ERR_THRESHOLD"][0],
            "cos_max_threshold": c["COS_MAX_THRESHOLD"][0], "max_abs_err_max_threshold": c["MAX_ABS_ERR_MAX_THRESHOLD"][0],
            "source": [src(CONST, c["COS_THRESHOLD"][1]), src(MULTI, _line_of(multi, "def check_accuracy"))],
        },
        "statistics": {
            "doc": "msprobe compare, statistics mode: a statistic (max, min, mean, norm) whose |npu - bench| / "
                   "max(|npu|, |bench|) exceeds magnitude needs a double check; first-diff analysis marks a "
                   "relative error above the listed bars as a difference",
            "magnitude": c["MAGNITUDE"][0],
            "first_diff_relative_err": {k: float(diff[k][0]) for k in diff.get("compare_metrics", [])},
            "source": [src(CONST, c["MAGNITUDE"][1]), src(SUMMARY, _line_of(summary, "def get_rela_diff_summary_mode")),
                       DIFF_YAML],
        },
        "input_output": {
            "doc": "msprobe indicator analysis, which judges a module's output against its inputs: error when the "
                   "inputs' norm relative error is below input_norm_rel_err_max and the output's above "
                   "output_norm_rel_err_error (RelativeErrChecker); warning when the output's is output_over_input "
                   "times the input's, or above 0.1 when the input's is 0 (RelativeWarnChecker); warning when the "
                   "inputs' cosine is above input_cosine_min and the output's is lower by more than "
                   "cosine_drop_warning (CosineWarnChecker)",
            "input_norm_rel_err_max": rel_err["in_threshold"][0],
            "output_norm_rel_err_error": rel_err["out_threshold"][0],
            "output_over_input": rel_warn["threshold"][0],
            "input_cosine_min": cos_warn["input_threshold"][0],
            "cosine_drop_warning": cos_warn["output_threshold"][0],
            "source": [src(INDICATOR, rel_err["in_threshold"][1]), src(INDICATOR, rel_warn["threshold"][1]),
                       src(INDICATOR, cos_warn["input_threshold"][1])],
        },
        "dtypes": {
            "doc": "msprobe accuracy checker's per-dtype relative tolerance (rtol) and small-value bound",
            "rtol": rtol, "small_value": small, "bfloat16_eps": c["BFLOAT16_EPS"][0],
            "source": [src(STANDARD, rtol_line), src(STANDARD, small_line), src(CONST, c["BFLOAT16_EPS"][1])],
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path)
    parser.add_argument("--version", default="26.2.0")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel
        if wheel is None:
            run = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", f"mindstudio-probe=={args.version}",
                                  "-d", tmp], capture_output=True, text=True)
            wheels = sorted(Path(tmp).glob("mindstudio_probe-*.whl"))
            if run.returncode or not wheels:
                print(f"cannot download mindstudio-probe=={args.version}: {run.stderr.strip()[-400:]}", file=sys.stderr)
                return 2
            wheel = wheels[0]
        try:
            data = extract(wheel)
        except (Missing, KeyError, zipfile.BadZipFile, OSError) as exc:
            print(f"{wheel}: {exc}", file=sys.stderr)
            return 2
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    doc = {"generated_by": "op_tables/msprobe_thresholds.py",
           "wheel": {"file": wheel.name, "sha256": digest,
                     "project": "https://gitcode.com/Ascend/MindStudio-Probe (PyPI: mindstudio-probe)"},
           **data}
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
