"""Compare a reduced-precision result with its fp32/fp64 golden and give a verdict.

Metrics follow msprobe's accuracy checker (mindstudio-probe, msprobe/pytorch/api_accuracy_checker:
compare/algorithm.py, compare/compare.py, precision_standard/standard_config.py), read from the 26.2.0
wheel:

* cosine similarity of the two tensors, each scaled by its own max |x| first; <= 0.99 is an error;
* max absolute error; < 0.001 passes;
* relative error |c - g| / (|g| + eps), with eps = 2^-8 for bf16 (msprobe's BFLOAT16_EPS) and the golden
  dtype's epsilon otherwise; the share of elements within 1% and 0.1% (msprobe's "hundredth" and
  "thousandth" ratios), with values |g| <= small_value (2^-10 for fp16/bf16) left out of the ratios;
* inf/nan where the golden is finite is an error (msprobe's absolute-threshold standard).

msprobe judges one operator on identical inputs. A module is a chain of operators, each rounding its
result, so an output element that is a near-cancellation of larger terms carries an error far above 1%
of its own (small) value even when every operator is exact to the last bit: a Linear-GELU-Linear stack in
bf16 keeps only ~78% of its elements within 1%. The element ratios are therefore reported but the verdict
uses the normwise relative error ||c - g|| / ||g||, measured in units of the dtype's relative tolerance
(msprobe's rtol: 2^-8 for bf16, 2^-10 for fp16, 2^-20 for fp32), which is what a merely rounded
computation keeps small and a numerically broken one (cancellation, stagnating sums, overflow) does not.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import torch

# msprobe StandardConfig._rtol / _small_value, and CompareConst.BFLOAT16_EPS.
RTOL = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -10, torch.float32: 2.0 ** -20}
SMALL_VALUE = {torch.bfloat16: 2.0 ** -10, torch.float16: 2.0 ** -10, torch.float32: 2.0 ** -20}
BFLOAT16_EPS = 2.0 ** -8
COSINE_ERROR = 0.99          # msprobe: cosine <= 0.99 is an error
MAX_ABS_PASS = 0.001         # msprobe: max abs error < 0.001 passes
HUNDREDTH, THOUSANDTH = 0.01, 0.001

# Normwise error budget, in units of RTOL[dtype]. A merely rounded module stays near 1 (measured: a
# Linear-GELU-Linear stack 1.1 in bf16, 0.5 in fp16; every leaf of the tiny GPT and ResNet fixtures
# below 4); the planted fragile modules are at 200 and above. Inherited drift through a deep model and
# gradients sum many roundings, so they get the wider budget.
OWN_WARN, OWN_ERROR = 4.0, 16.0
INHERITED_WARN, INHERITED_ERROR = 16.0, 64.0

PASS, WARNING, ERROR = "pass", "warning", "error"
VERDICT_RANK = {PASS: 0, WARNING: 1, ERROR: 2}


@dataclass(frozen=True)
class Comparison:
    """The metrics of one golden/candidate pair and its verdict (plain floats: it crosses processes)."""
    verdict: str
    reason: str
    elements: int
    nonfinite: int            # candidate inf/nan where the golden is finite
    cosine: float | None      # None: too few elements or all zero on both sides
    max_abs_err: float
    max_rel_err: float
    rel_err_norm: float       # ||c - g|| / ||g||
    err_in_rtol: float        # rel_err_norm / RTOL[dtype]
    within_hundredth: float   # share of (non-small) elements with relative error < 1%
    within_thousandth: float  # ... < 0.1%
    vanished: float = 0.0     # share of non-zero golden values that are exactly 0 in the candidate

    def to_dict(self) -> dict:
        """Plain JSON: floats rounded, inf/nan as None (the verdict's reason says what happened)."""
        return {k: json_float(v) if isinstance(v, float) else v for k, v in asdict(self).items()}


def json_float(value: float | None, digits: int = 6) -> float | None:
    return round(value, digits) if value is not None and math.isfinite(value) else None


def worst(*verdicts: str) -> str:
    return max(verdicts, key=VERDICT_RANK.__getitem__, default=PASS)


def flatten_floats(tensors: list[torch.Tensor]) -> torch.Tensor:
    """All floating elements of a list of tensors as one fp64 vector on the CPU."""
    parts = [t.detach().reshape(-1).to("cpu", torch.float64) for t in tensors if t.is_floating_point()]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.float64)


def compare(golden: torch.Tensor, candidate: torch.Tensor, dtype: torch.dtype, *,
            warn: float = OWN_WARN, error: float = OWN_ERROR, abs_pass: bool = True) -> Comparison:
    """Judge `candidate` (computed in `dtype`) against `golden`; both flattened fp64 vectors of one length.

    `abs_pass` applies msprobe's "max abs error < 0.001 passes" shortcut, which only turns a warning into a
    pass: it never hides an error (tiny gradients would otherwise pass whatever their relative error).
    """
    if golden.shape != candidate.shape:
        raise ValueError(f"shape mismatch: golden {tuple(golden.shape)} vs candidate {tuple(candidate.shape)}")
    g, c = golden.to(torch.float64), candidate.to(torch.float64)
    n = g.numel()
    rtol = RTOL.get(dtype, RTOL[torch.float32])
    if n == 0:
        return Comparison(PASS, "no floating-point elements", 0, 0, None, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    nonfinite = 0
    if not (math.isfinite(float(g.sum())) and math.isfinite(float(c.sum()))):  # rare: mask element-wise
        golden_finite, candidate_finite = torch.isfinite(g), torch.isfinite(c)
        nonfinite = int((golden_finite & ~candidate_finite).sum())
        both = golden_finite & candidate_finite
        g, c = g[both], c[both]
    diff = c - g
    max_abs = float(diff.abs().max()) if diff.numel() else 0.0
    g_norm = float(torch.linalg.vector_norm(g))
    diff_norm = float(torch.linalg.vector_norm(diff))
    rel_norm = diff_norm / g_norm if g_norm > 0 else (0.0 if diff_norm == 0 else math.inf)
    in_rtol = rel_norm / rtol
    cos = _cosine(g, c, g_norm)
    max_rel, within_h, within_t, vanished = _element_metrics(g, c, dtype, golden.dtype)

    def result(verdict: str, reason: str) -> Comparison:
        return Comparison(verdict, reason, n, nonfinite, cos, max_abs, max_rel, rel_norm, in_rtol,
                          within_h, within_t, vanished)

    if nonfinite:
        return result(ERROR, f"{nonfinite} of {n} values are inf/nan where fp32 is finite (overflow)")
    if cos is not None and cos <= COSINE_ERROR:
        return result(ERROR, f"cosine similarity {cos:.4f} <= {COSINE_ERROR}")
    if in_rtol > error:
        return result(ERROR, f"normwise error {rel_norm:.2%} = {in_rtol:.0f}x the {_name(dtype)} tolerance")
    if abs_pass and max_abs < MAX_ABS_PASS:
        return result(PASS, f"max abs error {max_abs:.2g} < {MAX_ABS_PASS}")
    if in_rtol > warn:
        return result(WARNING, f"normwise error {rel_norm:.2%} = {in_rtol:.1f}x the {_name(dtype)} tolerance")
    return result(PASS, f"normwise error {in_rtol:.1f}x the {_name(dtype)} tolerance")


# The element-wise shares are reported, not judged; on large tensors they are taken over this many evenly
# spaced elements, which keeps comparing a million-element activation to a few milliseconds.
ELEMENT_SAMPLE = 1 << 16


def _element_metrics(g: torch.Tensor, c: torch.Tensor, dtype: torch.dtype,
                     golden_dtype: torch.dtype) -> tuple[float, float, float, float]:
    """msprobe's max relative error and hundredth/thousandth shares, and the share flushed to zero."""
    if g.numel() > ELEMENT_SAMPLE:
        step = -(-g.numel() // ELEMENT_SAMPLE)
        g, c = g[::step], c[::step]
    g_abs = g.abs()
    eps = BFLOAT16_EPS if dtype == torch.bfloat16 else torch.finfo(golden_dtype).eps
    rel = (c - g).abs_().div_(g_abs + eps)
    normal = g_abs > SMALL_VALUE.get(dtype, SMALL_VALUE[torch.float32])
    normal_count = int(normal.sum())
    nonzero = g != 0
    vanished = int(((c == 0) & nonzero).sum()) / max(1, int(nonzero.sum()))
    if not normal_count:
        return 0.0, 1.0, 1.0, vanished
    rel_normal = rel[normal]
    return (float(rel_normal.max()), float((rel_normal < HUNDREDTH).sum()) / normal_count,
            float((rel_normal < THOUSANDTH).sum()) / normal_count, vanished)


def _cosine(g: torch.Tensor, c: torch.Tensor, g_norm: float) -> float | None:
    """msprobe's cosine: None when undefined on both sides; 0 when only one side is all zero.

    msprobe divides each side by its max |x| first, against overflow in its numpy arithmetic; in fp64 the
    quotient is the same without the two extra copies.
    """
    if g.numel() < 2:
        return None
    c_norm = float(torch.linalg.vector_norm(c))
    if g_norm == 0 and c_norm == 0:
        return None
    if g_norm == 0 or c_norm == 0:
        return 0.0
    cos = float(torch.dot(g, c)) / (g_norm * c_norm)
    return max(-1.0, min(1.0, cos))


def _name(dtype: torch.dtype) -> str:
    return {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}.get(dtype, str(dtype))


# More than this share of a parameter's gradient flushed to zero is underflow (fp16 without loss scaling).
VANISHED_ERROR = 0.01


def compare_gradients(golden: torch.Tensor, candidate: torch.Tensor, dtype: torch.dtype) -> Comparison:
    """Gradients: overflow is an error, underflow a warning (an error with drift); drift alone a warning.

    One step's gradient at a freshly initialised model is often badly conditioned: batch norm's backward
    subtracts the mean components of the incoming gradient, and what is left can be a small difference
    of large, rounded terms. Measured on the ResNet-18 fixture: conv weight gradients differ from fp64 by
    0.2% already in fp32 and by ~40% (cosine 0.91) in bf16, while bf16 trains ResNets fine. So a gradient
    that fails msprobe's cosine bar is reported as a warning, not as a broken module.
    """
    result = compare(golden, candidate, dtype, warn=INHERITED_WARN, error=INHERITED_ERROR, abs_pass=False)
    if result.nonfinite:
        return result
    if underflows(result):
        # Flushed values are the smallest ones: alone they barely move the norm (a warning: Adam's first
        # step still sees 0 instead of a sign); with a gradient that is also off, an error.
        return replace(result, verdict=ERROR if result.verdict == ERROR else WARNING,
                       reason=f"{result.vanished:.1%} of the gradient underflows to 0 in {_name(dtype)} "
                              f"(non-zero in the golden); {result.reason}")
    if result.verdict == ERROR:
        return replace(result, verdict=WARNING)
    return result


def underflows(result: Comparison | dict) -> bool:
    vanished = result["vanished"] if isinstance(result, dict) else result.vanished
    return vanished is not None and vanished > VANISHED_ERROR
