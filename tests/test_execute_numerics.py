"""msprobe-style metrics and verdicts (auditor.execute.numerics)."""
import math

import torch

from auditor.execute.numerics import ERROR, PASS, WARNING, compare, compare_gradients


def rounded(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return x.to(dtype).to(torch.float64)


def test_rounding_alone_passes_in_bf16_and_fp16():
    g = torch.randn(10_000, dtype=torch.float64) * 3
    for dtype in (torch.bfloat16, torch.float16):
        c = compare(g, rounded(g, dtype), dtype)
        assert c.verdict == PASS, c
        assert c.cosine > 0.9999
        assert c.err_in_rtol < 1.0


def test_overflow_is_an_error():
    g = torch.linspace(-1e5, 1e5, 1000, dtype=torch.float64)
    c = compare(g, g.to(torch.float16).double(), torch.float16)
    assert c.verdict == ERROR and c.nonfinite > 0 and "inf/nan" in c.reason


def test_wrong_direction_fails_msprobe_cosine_bar():
    g = torch.randn(1000, dtype=torch.float64)
    c = compare(g, g + 0.3 * torch.randn(1000, dtype=torch.float64), torch.bfloat16)
    assert c.verdict == ERROR and c.cosine <= 0.99


def test_scale_error_that_cosine_misses_is_caught_by_normwise_error():
    g = torch.rand(1000, dtype=torch.float64) + 1
    c = compare(g, g * 0.9, torch.bfloat16)
    assert c.cosine > 0.999
    assert c.verdict == ERROR and "normwise" in c.reason


def test_all_zero_candidate_is_an_error():
    g = torch.randn(100, dtype=torch.float64)
    c = compare(g, torch.zeros(100, dtype=torch.float64), torch.bfloat16)
    assert c.verdict == ERROR and c.cosine == 0.0


def test_small_absolute_error_turns_a_warning_into_a_pass_but_never_hides_an_error():
    g = torch.full((100,), 1e-4, dtype=torch.float64)
    slightly_off = g * (1 + 8 * 2.0 ** -8)  # 8x the bf16 tolerance: a warning by the normwise budget
    assert compare(g, slightly_off, torch.bfloat16).verdict == PASS
    assert compare(g, slightly_off, torch.bfloat16, abs_pass=False).verdict == WARNING
    assert compare(g, g * 2, torch.bfloat16).verdict == ERROR


def test_element_ratios_leave_out_small_values():
    g = torch.tensor([1.0, 2.0, 1e-6, 4.0], dtype=torch.float64)
    c = torch.tensor([1.0, 2.0, 5e-6, 4.1], dtype=torch.float64)
    r = compare(g, c, torch.bfloat16)
    assert r.within_hundredth == 2 / 3  # 4.1 vs 4.0 is 2.5% off; 1e-6 is a small value, left out
    assert math.isclose(r.max_rel_err, 0.1 / (4.0 + 2.0 ** -8))


def test_gradient_underflow_and_drift():
    g = torch.randn(1000, dtype=torch.float64) * 1e-8
    flushed = g.clone()
    flushed[:100] = 0
    under = compare_gradients(g, flushed, torch.float16)
    assert under.verdict == ERROR and "underflows" in under.reason  # 10% flushed: the norm is off too
    small = g.clone()
    small[small.abs() < small.abs().quantile(0.05)] = 0  # only the smallest 5%: the norm barely moves
    mild = compare_gradients(g, small, torch.float16)
    assert mild.verdict == WARNING and "underflows" in mild.reason
    noisy = compare_gradients(g, g + 0.5 * g.std() * torch.randn(1000, dtype=torch.float64), torch.bfloat16)
    assert noisy.verdict == WARNING
    inf = g.clone()
    inf[0] = math.inf
    assert compare_gradients(g, inf, torch.float16).verdict == ERROR


def test_shape_mismatch_is_refused():
    import pytest

    with pytest.raises(ValueError, match="shape mismatch"):
        compare(torch.zeros(3, dtype=torch.float64), torch.zeros(4, dtype=torch.float64), torch.bfloat16)
