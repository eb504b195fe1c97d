"""The cluster profiles are sourced data: every figure names a source with an address and a date,
announced hardware is marked, and the vendors' system totals agree with device figures x device count."""
from __future__ import annotations

import pytest

from auditor.plan.clusters import ClusterError, load_assumptions, load_table, resolve

REQUIRED = {"a100-80g", "h100", "h800", "gb200-nvl72", "atlas-800t-a2", "cloudmatrix384",
            "atlas-950-superpod", "atlas-960-superpod"}


def _figures(node, path=""):
    if isinstance(node, dict):
        if "value" in node:
            yield path, node
        for k, v in node.items():
            yield from _figures(v, f"{path}.{k}")


def test_required_profiles_exist():
    assert REQUIRED <= set(load_table()["clusters"])


def test_every_figure_cites_a_source_with_address_and_date():
    table = load_table()
    sources = table["sources"]
    for key, src in sources.items():
        assert src["url"].startswith("https://") and src.get("date") and src.get("title"), key
    figures = list(_figures(table["devices"])) + list(_figures(table["clusters"]))
    assert len(figures) > 40
    for path, fig in figures:
        assert fig["source"] in sources, f"{path} cites unknown source {fig.get('source')!r}"
        assert isinstance(fig["value"], (int, float)) and fig["value"] > 0, path


def test_announced_hardware_is_marked():
    table = load_table()
    for name in ("atlas-950-superpod", "atlas-960-superpod"):
        assert table["clusters"][name]["status"] == "announced"
        assert table["devices"][table["clusters"][name]["device"]]["status"] == "announced"
        c = resolve(name, load_assumptions())
        assert any("announced" in n for n in c.notes)


@pytest.mark.parametrize("name", ["atlas-950-superpod", "atlas-960-superpod"])
def test_superpod_totals_match_device_figures(name):
    table = load_table()
    c = table["clusters"][name]
    dev = table["devices"][c["device"]]
    n = c["scale_up"]["size"]["value"]
    assert n * dev["peak_tflops"]["fp8"]["value"] / 1e6 == pytest.approx(c["totals"]["fp8_eflops"]["value"], rel=0.04)
    assert n * dev["hbm_gb"]["value"] / 1e3 == pytest.approx(c["totals"]["memory_tb"]["value"], rel=0.03)
    both_ways = 2 * c["scale_up"]["gb_s"]["value"]
    assert n * both_ways / 1e6 == pytest.approx(c["totals"]["interconnect_pb_s"]["value"], rel=0.03)


def test_unsourced_figures_come_only_from_the_assumptions_and_say_so():
    A = load_assumptions()
    a2 = resolve("atlas-800t-a2:64", A)
    assert a2.assumed == []      # every 910B figure has a public (third-party) source
    gb = resolve("gb200-nvl72:144", A)
    assert gb.assumed == ["scale_out_gb_s"]
    assert all(f.cite({}).startswith("ASSUMED") for k, f in gb.figures.items() if k in gb.assumed)
    cm = resolve("cloudmatrix384", A)
    assert cm.assumed == [] and cm.devices == 384


def test_chips_without_a_bf16_figure_plan_at_fp8_and_say_so():
    c = resolve("atlas-950-superpod", load_assumptions())
    assert c.dtype == "fp8" and any("no bf16 peak" in n for n in c.notes)


def test_beyond_one_superpod_without_published_scale_out_is_refused():
    with pytest.raises(ClusterError, match="scale-out"):
        resolve("atlas-950-superpod:16384", load_assumptions())
    with pytest.raises(ClusterError, match="unknown cluster"):
        resolve("dgx-9000", load_assumptions())
    with pytest.raises(ClusterError, match="whole number"):
        resolve("h100:lots", load_assumptions())
