"""`audit compare DIR_A DIR_B`: two dumps of the same training steps (auditor/execute/dump.py), module by module.

DIR_A is the baseline (the GPU box, or an fp32 run), DIR_B the candidate (the NPU, or bf16). Module calls are
aligned by (module name, call index) within each step. Every recorded tensor pair gets msprobe's metrics:
from the full tensors when both dumps kept them (--dump-tensors), else from the fixed-seed value samples
(cosine, max absolute / relative error, normwise error: estimates) and from the statistics (the relative
error of max / min / mean / norm, msprobe's statistics mode).

The thresholds come from mindstudio-probe (msprobe) 26.2.0, extracted by op_tables/msprobe_thresholds.py
into op_tables/msprobe_thresholds.json (each value names the file and line of the wheel it came from):

* a tensor *fails* as msprobe's compare judges one ("Accuracy Reached or Not" = No): cosine < 0.9, or
  cosine < 0.99 with max absolute error > 0.001; or its norm differs by more than 50% (first-diff
  analysis); or it has inf/nan where the baseline is finite. msprobe's third bar, max absolute error > 1,
  is a warning here: it depends on the values' scale (see _verdict);
* the *first divergence* is msprobe's input/output rule (indicator analysis, RelativeErrChecker): a module
  call whose inputs and parameters match (normwise relative error < 0.1) while its output fails. Modules
  after it, whose inputs already differ, are counted but not reported; the modules containing it are left
  out (their output fails because it does);
* per dtype, a *drift* warning: the output's normwise error exceeds INHERITED_WARN (16) times msprobe's rtol
  for the lower precision of the pair (bf16 2^-8: 6.25%; fp16 2^-10; fp32 2^-20) and is at least 10 times
  the inputs' (msprobe's RelativeWarnChecker ratio). The factor 16 is this project's budget for error
  inherited through a model (docs/execute.md), not an msprobe number.

The loss per step fails like a statistic (relative difference > 50%, or inf/nan) and drifts past the same
per-dtype bar. Step time and peak memory are compared as ratios against --max-time-ratio and
--max-memory-ratio (this project's defaults, not msprobe's: msprobe publishes no performance bar).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from auditor.data import tables_dir
from auditor.findings import Finding

SCHEMA = "npu-audit-dump"
SCHEMA_VERSION = 1
DEFAULT_TIME_RATIO = 1.5      # candidate step time above 1.5x the baseline's: a warning (project default)
DEFAULT_MEMORY_RATIO = 1.2    # peak device memory above 1.2x the baseline's: a warning (project default)
PASS, WARNING, ERROR = "pass", "warning", "error"
RANK = {PASS: 0, WARNING: 1, ERROR: 2}
PRECISION = {"float64": 0, "float32": 1, "bfloat16": 3, "float16": 2}   # higher: coarser rounding
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float64": "fp32"}
ROW_LIMIT = 40


class CompareError(ValueError):
    """A folder that is not a dump, or two dumps that cannot be compared at all: exit 2."""


@lru_cache(maxsize=None)
def thresholds() -> dict:
    return json.loads((tables_dir() / "msprobe_thresholds.json").read_text(encoding="utf-8"))


def drift_bar(dtype: str) -> float:
    from auditor.execute.numerics import INHERITED_WARN

    rtol = thresholds()["dtypes"]["rtol"]
    return INHERITED_WARN * rtol.get(SHORT.get(dtype, "fp32"), rtol["fp32"])


# --- reading dumps -----------------------------------------------------------------------------------------

@dataclass
class Dump:
    path: Path
    manifest: dict
    _steps: dict[int, dict] = field(default_factory=dict)
    _tensors: dict[int, dict] = field(default_factory=dict)

    @property
    def label(self) -> str:
        env = self.manifest.get("environment", {})
        policy = self.manifest.get("dtype_policy", {})
        return f"{self.path.name} ({env.get('device', '?')}, {policy.get('amp') or 'fp32'})"

    def step(self, k: int) -> dict:
        if k not in self._steps:
            entry = self.manifest["steps"][k]
            try:
                self._steps[k] = json.loads((self.path / entry["file"]).read_text(encoding="utf-8"))
            except (OSError, ValueError, KeyError) as exc:
                raise CompareError(f"{self.path}: cannot read step {k} ({entry.get('file')}): {exc}") from None
        return self._steps[k]

    def tensors(self, k: int) -> dict | None:
        if not self.manifest.get("tensors"):
            return None
        if k not in self._tensors:
            import torch

            file = self.path / "tensors" / f"step_{k:03d}.pt"
            try:
                self._tensors[k] = torch.load(file, map_location="cpu", weights_only=True)
            except Exception as exc:  # noqa: BLE001 - a missing or corrupt file: compare falls back to samples
                self._tensors[k] = {}
                self.manifest.setdefault("_warnings", []).append(f"{file}: not read ({type(exc).__name__})")
        return self._tensors[k]


def load_dump(path: Path) -> Dump:
    path = Path(path)
    manifest_file = path / "manifest.json"
    if not path.is_dir():
        raise CompareError(f"{path}: no such folder (give two folders written by `audit FILE --execute --dump DIR`)")
    if not manifest_file.is_file():
        raise CompareError(f"{path}: no manifest.json; not a dump written by `audit FILE --execute --dump DIR`")
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompareError(f"{manifest_file}: not readable JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise CompareError(f"{manifest_file}: not an {SCHEMA} manifest")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise CompareError(f"{manifest_file}: schema version {version!r}; this audit reads up to "
                           f"{SCHEMA_VERSION} (upgrade npu-audit)")
    if not manifest.get("steps"):
        raise CompareError(f"{manifest_file}: the dump has no steps")
    return Dump(path, manifest)


# --- metrics of one recorded slot (a module's inputs, parameters, output ...) ---------------------------------

def _num(v: Any) -> float:
    return float(v) if v is not None else math.nan


def _combined(leaves: list[dict]) -> dict:
    """The statistics of several tensors taken as one: msprobe compares the max/min/mean/norm columns."""
    numel = sum(l["numel"] for l in leaves)
    norms = [_num(l["norm"]) for l in leaves if l["numel"]]
    means = [(_num(l["mean"]), l["numel"]) for l in leaves if l["numel"]]
    return {
        "max": max((_num(l["max"]) for l in leaves if l["numel"]), default=math.nan),
        "min": min((_num(l["min"]) for l in leaves if l["numel"]), default=math.nan),
        "mean": sum(m * n for m, n in means) / numel if numel else math.nan,
        "norm": math.sqrt(sum(n * n for n in norms)) if norms else math.nan,
        "nonfinite": sum(l.get("nonfinite", 0) for l in leaves),
        "dtype": max((l["dtype"] for l in leaves), key=lambda d: PRECISION.get(d, 1)),
    }


def _stat_rel(a: float, b: float) -> float:
    """msprobe's statistics-mode relative difference |b - a| / max(|a|, |b|) (0 when both are 0)."""
    if math.isnan(a) and math.isnan(b):
        return 0.0
    scale = max(abs(a), abs(b))
    return abs(b - a) / scale if scale > 0 else 0.0


def _vector(values: list) -> "Any":
    import torch

    return torch.tensor([float(v) for v in values], dtype=torch.float64)


def slot_metrics(a: list[dict] | None, b: list[dict] | None, full: tuple[list, list] | None = None,
                 policy: str = "float32") -> dict | None:
    """msprobe's metrics of one slot, and its verdict on msprobe's bars; None when neither side has it.

    The dtype whose budget applies is the coarsest of the two tensors' and of the runs' autocast dtype
    (`policy`): under bf16 autocast an fp32 residual stream carries bf16 rounding from the matmuls before it."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        return {"verdict": ERROR, "reason": "recorded on one side only", "structural": True}
    shapes_a, shapes_b = [l["shape"] for l in a], [l["shape"] for l in b]
    if shapes_a != shapes_b:
        return {"verdict": ERROR, "reason": f"shapes differ: {shapes_a} vs {shapes_b}", "structural": True}
    sa, sb = _combined(a), _combined(b)
    dtype = max(sa["dtype"], sb["dtype"], policy, key=lambda d: PRECISION.get(d, 1))
    m: dict[str, Any] = {"dtype": dtype, "norm_a": sa["norm"], "norm_b": sb["norm"]}
    for key in ("max", "min", "mean", "norm"):
        m[f"{key}_rel_err"] = _stat_rel(sa[key], sb[key])
    # msprobe's NormRelativeErr: |norm_b - norm_a| / |norm_a|
    m["norm_relative_err"] = abs(sb["norm"] - sa["norm"]) / abs(sa["norm"]) if sa["norm"] else (
        0.0 if not sb["norm"] else math.inf)
    m["nonfinite_a"], m["nonfinite_b"] = sa["nonfinite"], sb["nonfinite"]
    if full is not None:
        import torch

        from auditor.execute.numerics import flatten_floats

        va = flatten_floats([t for t in full[0]]) if all(t.is_floating_point() for t in full[0]) else \
            torch.cat([t.reshape(-1).to(torch.float64) for t in full[0]])
        vb = flatten_floats([t for t in full[1]]) if all(t.is_floating_point() for t in full[1]) else \
            torch.cat([t.reshape(-1).to(torch.float64) for t in full[1]])
        m["from"] = "tensors"
    else:
        va = _vector([v for l in a for v in l.get("sample", [])])
        vb = _vector([v for l in b for v in l.get("sample", [])])
        m["from"] = "sample"
    if va.numel() and va.shape == vb.shape:
        from auditor.execute.numerics import compare

        c = compare(va, vb, _torch_dtype(dtype))
        m.update(cosine=c.cosine, max_abs_err=c.max_abs_err, max_rel_err=c.max_rel_err, normwise_err=c.rel_err_norm)
    else:
        m.update(cosine=None, max_abs_err=None, max_rel_err=None, normwise_err=None)
    m["verdict"], m["reason"] = _verdict(m)
    return m


def _torch_dtype(name: str):
    import torch

    return getattr(torch, name, torch.float32)


def _verdict(m: dict) -> tuple[str, str]:
    t = thresholds()
    real, stats = t["real_data"], t["statistics"]
    if m["nonfinite_b"] > m["nonfinite_a"]:
        return ERROR, f"{m['nonfinite_b']} inf/nan values where the baseline has {m['nonfinite_a']}"
    if m["nonfinite_a"] > m["nonfinite_b"]:
        return ERROR, f"the baseline has {m['nonfinite_a']} inf/nan values, the candidate {m['nonfinite_b']}"
    cos, abs_err = m.get("cosine"), m.get("max_abs_err")
    where = "" if m.get("from") == "tensors" else " (on the sampled values)"
    if cos is not None and cos < real["cos_max_threshold"]:
        return ERROR, f"cosine {cos:.4f} < {real['cos_max_threshold']}{where}"
    if cos is not None and abs_err is not None and cos < real["cos_threshold"] and abs_err > real["max_abs_err_threshold"]:
        return ERROR, (f"cosine {cos:.4f} < {real['cos_threshold']} with max absolute error {abs_err:.3g} > "
                       f"{real['max_abs_err_threshold']:g}{where}")
    norm_bar = stats["first_diff_relative_err"].get("NormRelativeErr", stats["magnitude"])
    if m["norm_relative_err"] > norm_bar:
        return ERROR, f"norm differs by {m['norm_relative_err']:.1%} (> {norm_bar:.0%})"
    if abs_err is not None and abs_err > real["max_abs_err_max_threshold"]:
        # msprobe's check says "No" here too, but an absolute bar depends on the values' scale: one bf16 ulp
        # is 2 at 256, so trained models' residual streams pass every relative bar and still exceed it.
        # A warning, then, never the error that pins a first divergence.
        return WARNING, (f"max absolute error {abs_err:.3g} > {real['max_abs_err_max_threshold']:g}{where} "
                         f"(msprobe's accuracy check: No; scale-dependent, relative bars pass)")
    drift = drift_bar(m["dtype"])
    err = _err(m)
    if err > drift:
        return WARNING, f"normwise error {err:.3g} > {drift:.3g} (16 x {SHORT.get(m['dtype'], m['dtype'])} rtol)"
    return PASS, ""


def _err(m: dict | None) -> float:
    """The one number that says how far a slot is off: the normwise error, else msprobe's norm relative error."""
    if not m or m.get("structural"):
        return math.inf if m else 0.0
    e = m.get("normwise_err")
    return max(e if e is not None else 0.0, m["norm_relative_err"])


def _inputs_match(record_metrics: dict) -> tuple[bool, float]:
    """msprobe's input bar: the inputs and parameters (when recorded) within 0.1 normwise relative error."""
    bar = thresholds()["input_output"]["input_norm_rel_err_max"]
    worst = 0.0
    for key in ("input", "params"):
        m = record_metrics.get(key)
        if m is None:
            continue
        if m.get("structural") or m["nonfinite_b"] != m["nonfinite_a"]:
            return False, math.inf
        worst = max(worst, _err(m))
    return worst < bar, worst


# --- the comparison ------------------------------------------------------------------------------------------

@dataclass
class Divergence:
    step: int
    kind: str            # forward | between (code between modules) | backward
    module: str
    call: int
    type: str
    severity: str
    reason: str
    input_err: float
    metrics: dict
    downstream: int = 0


def _key(record: dict) -> tuple[str, int]:
    return record["module"], record["call"]


def _contains(parent: str, child: str) -> bool:
    return parent == "" or child.startswith(parent + ".")


POLICY_DTYPES = {None: "float32", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def policy_dtype(a: Dump, b: Dump) -> str:
    """The coarsest compute dtype of the two runs' dtype policies (autocast bf16 / fp16, or fp32)."""
    names = [POLICY_DTYPES.get(d.manifest.get("dtype_policy", {}).get("amp"), "float32") for d in (a, b)]
    return max(names, key=lambda d: PRECISION.get(d, 1))


def compare_step(a: Dump, b: Dump, k: int) -> dict:
    sa, sb = a.step(k), b.step(k)
    policy = policy_dtype(a, b)
    ta, tb = a.tensors(k), b.tensors(k)
    b_records = {_key(r): r for r in sb.get("forward", [])}
    a_keys = {_key(r) for r in sa.get("forward", [])}
    rows, unmatched = [], []
    for ra in sa.get("forward", []):
        rb = b_records.get(_key(ra))
        if rb is None:
            unmatched.append(f"{ra['module'] or '(model)'}#{ra['call']} only in the baseline")
            continue
        metrics = {}
        for slot in ("input", "params", "output", "output_grad"):
            full = _full(ta, tb, ra, slot)
            metrics[slot] = slot_metrics(ra.get(slot), rb.get(slot), full, policy)
        rows.append({"record": ra, "metrics": metrics})
    unmatched += [f"{m or '(model)'}#{c} only in the candidate" for m, c in b_records if (m, c) not in a_keys]
    grads = {}
    pa, pb = sa.get("param_grads", {}), sb.get("param_grads", {})
    for name in pa.keys() | pb.keys():
        full = None
        if ta and tb:
            la = [ta.get(f"{name}.param_grad.{i}") for i in range(len(pa.get(name, [])))]
            lb = [tb.get(f"{name}.param_grad.{i}") for i in range(len(pb.get(name, [])))]
            if la and all(t is not None for t in la + lb) and len(la) == len(lb):
                full = (la, lb)
        grads[name] = slot_metrics(pa.get(name), pb.get(name), full, policy)
    return {"rows": rows, "unmatched": unmatched, "param_grads": grads,
            "loss": (sa.get("loss"), sb.get("loss"))}


def _full(ta, tb, record, slot):
    if not ta or not tb:
        return None
    prefix = f"{record['module']}#{record['call']}.{slot}."
    la = [v for k, v in ta.items() if k.startswith(prefix)]
    lb = [v for k, v in tb.items() if k.startswith(prefix)]
    if not la or len(la) != len(lb):
        return None
    return la, lb


def forward_divergences(step: int, result: dict) -> tuple[list[Divergence], list[Divergence]]:
    """Error origins (inputs match, output fails) and drift origins, in the order calls finished."""
    io = thresholds()["input_output"]
    errors: list[Divergence] = []
    drifts: list[Divergence] = []
    for row in result["rows"]:
        r, m = row["record"], row["metrics"]
        out = m.get("output")
        if out is None or out["verdict"] == PASS:
            continue
        match, input_err = _inputs_match(m)
        if out["verdict"] == ERROR and match:
            if any((_contains(r["module"], d.module) and r["module"] != d.module)
                   or (r["module"] == d.module and d.kind == "between") for d in errors):
                continue   # a container whose child (or whose own code between children) already diverged
            errors.append(Divergence(step, "forward", r["module"], r["call"], r["type"], ERROR, out["reason"],
                                     input_err, out))
        elif out["verdict"] == ERROR:
            if errors:
                errors[0].downstream += 1
            else:
                # Its inputs already fail although every call before it passed: the difference arose in
                # code between modules, in the forward of the module that contains this call.
                parent = r["module"].rpartition(".")[0] if r["module"] else ""
                kind = "between"
                errors.append(Divergence(step, kind, parent, 0, _type_of(result, parent), ERROR,
                                         f"the inputs of `{r['module'] or '(model)'}` already fail "
                                         f"({_input_reason(m)}) although every module call before it passed",
                                         input_err, out))
        elif out["verdict"] == WARNING and input_err <= drift_bar(out["dtype"]) and \
                _err(out) >= io["output_over_input"] * input_err:
            if any(_contains(r["module"], d.module) and r["module"] != d.module for d in drifts):
                continue
            drifts.append(Divergence(step, "forward", r["module"], r["call"], r["type"], WARNING, out["reason"],
                                     input_err, out))
    return errors, drifts


def _type_of(result: dict, module: str) -> str:
    return next((row["record"]["type"] for row in result["rows"] if row["record"]["module"] == module), "")


def _input_reason(metrics: dict) -> str:
    for key in ("input", "params"):
        m = metrics.get(key)
        if m and m.get("verdict") != PASS:
            return f"{key}: {m.get('reason')}"
    return "normwise error >= 0.1"


def backward_divergences(step: int, result: dict) -> list[Divergence]:
    """Modules whose parameters' gradients fail while the gradient reaching their output matches."""
    bar = thresholds()["input_output"]["input_norm_rel_err_max"]
    incoming: dict[str, tuple[bool, float]] = {}
    for row in result["rows"]:
        r, m = row["record"], row["metrics"]
        g = m.get("output_grad")
        if g is None:
            continue
        ok = not g.get("structural") and g["nonfinite_a"] == g["nonfinite_b"] and _err(g) < bar
        prev = incoming.get(r["module"], (True, 0.0))
        incoming[r["module"]] = (prev[0] and ok, max(prev[1], _err(g)))
    out = []
    order = [row["record"]["module"] for row in result["rows"]]
    for name in sorted(result["param_grads"], key=lambda n: -order.index(n) if n in order else 0):
        m = result["param_grads"][name]
        if m is None or m["verdict"] != ERROR:
            continue
        ok, err = incoming.get(name, (True, 0.0))
        if ok:
            severity = ERROR if m["nonfinite_b"] > m["nonfinite_a"] else WARNING
            t = next((row["record"]["type"] for row in result["rows"] if row["record"]["module"] == name), "")
            out.append(Divergence(step, "backward", name, 0, t, severity, m["reason"], err, m))
    return out


@dataclass
class CompareOptions:
    max_time_ratio: float = DEFAULT_TIME_RATIO
    max_memory_ratio: float = DEFAULT_MEMORY_RATIO


def compare_dumps(dir_a: Path, dir_b: Path, options: CompareOptions | None = None) -> tuple[list[Finding], dict]:
    """Findings (source 'execute') and the report section of two dumps."""
    options = options or CompareOptions()
    a, b = load_dump(dir_a), load_dump(dir_b)
    where = _Where(a, b)
    findings: list[Finding] = []
    structure = _structure(a, b)
    for problem, severity in structure:
        findings.append(where.finding("NPU294", severity, f"the dumps are not of the same run: {problem}",
                                      symbol="structure", data={"problem": problem}))
    steps = min(len(a.manifest["steps"]), len(b.manifest["steps"]))
    first: Divergence | None = None
    others: list[Divergence] = []
    drift: list[Divergence] = []
    grads: list[Divergence] = []
    step_results = []
    for k in range(steps):
        result = compare_step(a, b, k)
        step_results.append(result)
        if result["unmatched"] and k == 0:
            findings.append(where.finding("NPU294", ERROR, "module calls do not align: "
                                          + "; ".join(result["unmatched"][:5])
                                          + (f" and {len(result['unmatched']) - 5} more" if len(result["unmatched"]) > 5 else ""),
                                          symbol="modules", data={"unmatched": result["unmatched"]}))
        errors, drifts = forward_divergences(k, result)
        if errors:
            first, others = errors[0], errors[1:]
            break
        drift += [d for d in drifts if (d.module, d.call) not in {(x.module, x.call) for x in drift}]
        back = backward_divergences(k, result)
        if any(d.severity == ERROR for d in back):
            first = next(d for d in back if d.severity == ERROR)
            break
        if back:
            grads = back
            break   # later steps train on weights this step's gradients already changed
    label_a, label_b = a.label, b.label
    if first is not None:
        findings.append(_divergence_finding(where, first, label_a, label_b, first=True))
        for d in others:
            findings.append(_divergence_finding(where, d, label_a, label_b, first=False))
    for d in grads:
        findings.append(_divergence_finding(where, d, label_a, label_b, first=False))
    for d in drift[:10]:
        findings.append(where.finding(
            "NPU291", WARNING, f"`{d.module or '(model)'}` ({d.type}) drifts beyond the {SHORT.get(d.metrics['dtype'])} "
            f"budget on inputs that are still within it, at step {d.step}: {d.reason} (inputs {d.input_err:.3g})",
            symbol=d.module or d.type, module=d.module, data=_divergence_data(d)))
    loss_rows, loss_finding = _loss(a, b, steps, where)
    if loss_finding:
        findings.append(loss_finding)
    perf, perf_findings = _performance(a, b, options, where)
    findings += perf_findings
    section = _section(a, b, first, others, drift, grads, step_results, loss_rows, perf, structure, steps)
    return findings, section


def _structure(a: Dump, b: Dump) -> list[tuple[str, str]]:
    problems = []
    ma, mb = a.manifest, b.manifest
    if ma["inputs"].get("sha256") != mb["inputs"].get("sha256"):
        problems.append(("the inputs differ (pass the baseline's inputs.pt as --inputs when dumping the "
                         "candidate)", ERROR))
    wa, wb = ma.get("weights", {}).get("sha256_initial"), mb.get("weights", {}).get("sha256_initial")
    if wa and wb and wa != wb:
        problems.append(("the initial weights differ (same entry, same torch.manual_seed, weights built on the CPU)",
                         ERROR))
    if ma["model"].get("parameters") != mb["model"].get("parameters"):
        problems.append((f"{ma['model'].get('parameters')} vs {mb['model'].get('parameters')} parameters", ERROR))
    if len(ma["steps"]) != len(mb["steps"]):
        problems.append((f"{len(ma['steps'])} vs {len(mb['steps'])} steps; the first "
                         f"{min(len(ma['steps']), len(mb['steps']))} are compared", WARNING))
    if ma.get("optimizer") != mb.get("optimizer"):
        problems.append((f"optimizer {ma.get('optimizer')} vs {mb.get('optimizer')}", WARNING))
    return problems


def _loss(a: Dump, b: Dump, steps: int, where: "_Where") -> tuple[list[dict], Finding | None]:
    stats = thresholds()["statistics"]
    dtype = policy_dtype(a, b)
    bar = drift_bar(dtype)
    rows: list[dict[str, Any]] = []
    worst: dict[str, Any] | None = None
    for k in range(steps):
        la, lb = _num_or_nan(a.manifest["steps"][k]["loss"]), _num_or_nan(b.manifest["steps"][k]["loss"])
        rel = abs(lb - la) / abs(la) if la and math.isfinite(la) and math.isfinite(lb) else math.inf
        if not math.isfinite(lb) and not math.isfinite(la):
            verdict, reason = PASS, "inf/nan on both sides"
        elif not math.isfinite(lb) or not math.isfinite(la):
            verdict, reason = ERROR, "inf/nan on one side"
        elif _stat_rel(la, lb) > stats["magnitude"]:
            verdict, reason = ERROR, f"differs by {rel:.1%} (msprobe's statistics bar: {stats['magnitude']:.0%})"
        elif rel > bar:
            verdict, reason = WARNING, f"differs by {rel:.3g} > {bar:.3g} (16 x {SHORT[dtype]} rtol)"
        else:
            verdict, reason = PASS, ""
        rows.append({"step": k, "loss_a": la, "loss_b": lb, "rel_err": round(rel, 6) if math.isfinite(rel) else None,
                     "verdict": verdict, "reason": reason})
        if verdict != PASS and (worst is None or RANK[verdict] > RANK[worst["verdict"]]):
            worst = rows[-1]
    if worst is None:
        return rows, None
    finding = where.finding(
        "NPU293", worst["verdict"],
        f"the loss curves diverge: step {worst['step']} loss {worst['loss_a']:.6g} ({a.label}) vs "
        f"{worst['loss_b']:.6g} ({b.label}), {worst['reason']}",
        symbol="loss", data={"steps": rows})
    return rows, finding


def _num_or_nan(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _performance(a: Dump, b: Dump, options: CompareOptions, where: "_Where") -> tuple[dict, list[Finding]]:
    pa, pb = a.manifest.get("performance", {}), b.manifest.get("performance", {})
    out = {"step_time_s_a": pa.get("step_time_s"), "step_time_s_b": pb.get("step_time_s"),
           "peak_memory_bytes_a": pa.get("peak_memory_bytes"), "peak_memory_bytes_b": pb.get("peak_memory_bytes")}
    findings = []
    ta, tb = pa.get("step_time_s"), pb.get("step_time_s")
    if ta and tb:
        out["time_ratio"] = round(tb / ta, 3)
        if tb / ta > options.max_time_ratio:
            findings.append(where.finding(
                "NPU790", WARNING, f"a training step takes {tb / ta:.2f}x as long on {b.label} ({tb * 1000:.1f} ms) "
                f"as on {a.label} ({ta * 1000:.1f} ms); the bar is {options.max_time_ratio:g}x",
                symbol="step_time", data=out))
    ma, mb = pa.get("peak_memory_bytes"), pb.get("peak_memory_bytes")
    if ma and mb:
        out["memory_ratio"] = round(mb / ma, 3)
        if mb / ma > options.max_memory_ratio:
            findings.append(where.finding(
                "NPU791", WARNING, f"peak device memory is {mb / ma:.2f}x on {b.label} ({mb / 2**20:,.0f} MiB) "
                f"against {a.label} ({ma / 2**20:,.0f} MiB); the bar is {options.max_memory_ratio:g}x",
                symbol="peak_memory", data=out))
    elif ma is None or mb is None:
        out["note"] = "peak device memory is not measured on the CPU"
    return out, findings


def _divergence_data(d: Divergence) -> dict:
    keep = ("dtype", "cosine", "max_abs_err", "max_rel_err", "normwise_err", "norm_relative_err", "from")
    return {"step": d.step, "kind": d.kind, "module": d.module, "call": d.call, "input_err": _json(d.input_err),
            "downstream": d.downstream, **{k: _json(d.metrics.get(k)) for k in keep}}


def _json(v):
    return round(v, 6) if isinstance(v, float) and math.isfinite(v) else (None if isinstance(v, float) else v)


def _divergence_finding(where: "_Where", d: Divergence, label_a: str, label_b: str, first: bool) -> Finding:
    name = d.module or "(model)"
    if d.kind == "forward":
        lead = "first divergence" if first else "also diverges on matching inputs"
        msg = (f"{lead}: `{name}` ({d.type}, call {d.call}) at step {d.step}: its inputs and parameters match "
               f"(normwise error {d.input_err:.2g} < 0.1) but its output fails: {d.reason}"
               + (f"; {d.downstream} later module call(s) inherit the difference" if first and d.downstream else "")
               + f" ({label_a} vs {label_b})")
        code = "NPU290"
    elif d.kind == "between":
        msg = (f"first divergence: in the forward code of `{name}` ({d.type}) outside its submodules, at step "
               f"{d.step}: {d.reason} ({label_a} vs {label_b})")
        code = "NPU290"
    else:
        msg = (f"the parameter gradients of `{name}` ({d.type}) diverge at step {d.step} while the gradient "
               f"reaching its output matches: {d.reason} ({label_a} vs {label_b})")
        code = "NPU292"
    return where.finding(code, d.severity, msg, symbol=name, module=d.module, data=_divergence_data(d))


class _Where:
    """Findings point at the module's class when its file is here, else at the candidate dump's manifest."""

    def __init__(self, a: Dump, b: Dump):
        self.modules = {**a.manifest["model"].get("modules", {}), **b.manifest["model"].get("modules", {})}
        self.root = Path.cwd().resolve()
        self.fallback = self._relative(b.path / "manifest.json")

    def _relative(self, path: Path) -> str:
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).resolve().as_posix()

    def locate(self, module: str | None) -> tuple[str, int]:
        info = self.modules.get(module) if module is not None else None
        if info and info.get("file") and info.get("line") and "site-packages" not in info["file"] \
                and Path(info["file"]).is_file():
            return self._relative(Path(info["file"])), int(info["line"])
        return self.fallback, 1

    def finding(self, code: str, severity: str, message: str, *, symbol: str, module: str | None = None,
                data: dict | None = None) -> Finding:
        from auditor.rules import rules_by_code

        rule = rules_by_code()[code]
        path, line = self.locate(module)
        return Finding(code=code, name=rule.name, category=rule.category, severity=severity, effort=rule.effort,
                       path=path, line=line, col=1, end_line=line, end_col=1, message=message,
                       substitution=rule.substitution, fix="none", source="execute", symbol=symbol,
                       data=data or {})


# --- the report section ------------------------------------------------------------------------------------

def _fmt(v, digits=4):
    if v is None:
        return None
    if isinstance(v, float):
        return round(v, digits) if math.isfinite(v) else str(v)
    return v


def _section(a, b, first, others, drift, grads, step_results, loss_rows, perf, structure, steps) -> dict:
    shown = step_results[first.step] if first is not None else (step_results[0] if step_results else None)
    rows = []
    if shown is not None:
        for row in shown["rows"]:
            r, m = row["record"], row["metrics"]
            out = m.get("output") or {}
            verdict = out.get("verdict", PASS)
            is_first = first is not None and first.kind == "forward" and (r["module"], r["call"]) == (first.module, first.call)
            _, input_err = _inputs_match(m)
            rows.append({"module": r["module"] or "(model)", "call": r["call"], "type": r["type"],
                         "verdict": verdict, "input_err": _fmt(input_err),
                         "output_err": _fmt(_err(out) if out else None), "output_cosine": _fmt(out.get("cosine")),
                         "reason": ("FIRST DIVERGENCE: " if is_first else "") + out.get("reason", "")})
    # the calls that matter: the first divergence and what fails after it, a few passing calls before it
    interesting = [r for r in rows if r["verdict"] != PASS or r["reason"].startswith("FIRST")]
    kept = interesting[:ROW_LIMIT]
    title = (f"Compare: {a.label} vs {b.label}, {steps} step(s), "
             + (f"first divergence `{first.module or '(model)'}` at step {first.step} ({first.kind})"
                if first is not None else "no module diverges on matching inputs"))
    return {
        "title": title,
        "rows": kept,
        "baseline": str(a.path), "candidate": str(b.path),
        "environment": {"a": a.manifest.get("environment"), "b": b.manifest.get("environment")},
        "dtype_policy": {"a": a.manifest.get("dtype_policy"), "b": b.manifest.get("dtype_policy")},
        "first_divergence": _divergence_data(first) if first is not None else None,
        "other_origins": [_divergence_data(d) for d in others],
        "gradient_divergences": [_divergence_data(d) for d in grads],
        "drift_origins": [_divergence_data(d) for d in drift],
        "module_calls_compared": len(rows),
        "module_calls_failing": sum(1 for r in rows if r["verdict"] == ERROR),
        "metrics_from": "tensors" if a.manifest.get("tensors") and b.manifest.get("tensors") else "samples and statistics",
        "loss": loss_rows,
        "performance": perf,
        "structure": [p for p, _ in structure],
        "thresholds": "msprobe (mindstudio-probe 26.2.0) via op_tables/msprobe_thresholds.json",
    }
