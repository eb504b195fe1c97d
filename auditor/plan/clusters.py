"""Cluster profiles (op_tables/clusters/clusters.yaml) and the assumptions file, resolved into numbers the
layout model uses, each remembering whether it is sourced or assumed."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from auditor.data import tables_dir

ASSUMPTIONS_FILE = Path(__file__).with_name("assumptions.yaml")
DTYPE_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "float8": "fp8", "bf16": "bf16", "fp16": "fp16",
                 "fp8": "fp8", "hif8": "hif8", "fp4": "fp4"}


class ClusterError(ValueError):
    """Unknown cluster, bad device count or unreadable data: the message is for the user."""


@lru_cache(maxsize=1)
def load_table() -> dict:
    path = tables_dir() / "clusters" / "clusters.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_assumptions(path: Path | None = None) -> dict:
    """The defaults, with a user's file merged over them key by key."""
    base = yaml.safe_load(ASSUMPTIONS_FILE.read_text(encoding="utf-8"))
    if path is None:
        return base
    try:
        user = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ClusterError(f"--assumptions {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ClusterError(f"--assumptions {path}: not valid YAML: {exc}") from None
    if not isinstance(user, dict):
        raise ClusterError(f"--assumptions {path}: expected a mapping like the defaults in {ASSUMPTIONS_FILE.name}")
    unknown = set(user) - set(base)
    if unknown:
        raise ClusterError(f"--assumptions {path}: unknown keys {sorted(unknown)}; known: {sorted(base)}")
    return _merge(base, user)


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@dataclass
class Figure:
    value: float
    source: str          # a key of the sources table, or "" when assumed
    note: str = ""
    assumed: str = ""    # the basis, when the figure comes from hardware_gaps

    def cite(self, sources: dict) -> str:
        if self.assumed:
            return f"ASSUMED: {self.assumed}"
        src = sources.get(self.source, {})
        text = f"{src.get('title', self.source)}, {src.get('url', '')} ({src.get('date', '')})"
        return text + (f"; {self.note}" if self.note else "")


@dataclass
class Cluster:
    name: str
    title: str
    devices: int
    device_title: str
    status: str
    available: str
    dtype: str                      # the dtype whose peak is used
    peak_tflops: Figure
    hbm_gb: Figure
    hbm_tb_s: Figure
    scale_up_size: Figure
    scale_up_gb_s: Figure
    scale_up_link: str
    scale_out_gb_s: Figure | None
    scale_out_link: str
    notes: list = field(default_factory=list)

    @property
    def figures(self) -> dict[str, Figure]:
        out = {"peak_tflops": self.peak_tflops, "hbm_gb": self.hbm_gb, "hbm_tb_s": self.hbm_tb_s,
               "scale_up_size": self.scale_up_size, "scale_up_gb_s": self.scale_up_gb_s}
        if self.scale_out_gb_s is not None:
            out["scale_out_gb_s"] = self.scale_out_gb_s
        return out

    @property
    def assumed(self) -> list[str]:
        return [k for k, f in self.figures.items() if f.assumed]

    def to_dict(self) -> dict:
        sources = load_table()["sources"]
        return {
            "name": self.name, "title": self.title, "devices": self.devices, "device": self.device_title,
            "status": self.status, **({"available": self.available} if self.available else {}),
            "dtype": self.dtype, "peak_tflops": self.peak_tflops.value, "hbm_gb": self.hbm_gb.value,
            "hbm_tb_s": self.hbm_tb_s.value, "scale_up": {"link": self.scale_up_link, "size": int(self.scale_up_size.value),
                                                         "gb_s_per_device": self.scale_up_gb_s.value},
            "scale_out": {"link": self.scale_out_link,
                          "gb_s_per_device": self.scale_out_gb_s.value if self.scale_out_gb_s else None},
            "sources": {k: f.cite(sources) for k, f in self.figures.items()},
            "assumed": self.assumed, "notes": self.notes,
        }


def cluster_names() -> list[str]:
    return list(load_table()["clusters"])


def _figure(raw, gap=None, what: str = "") -> Figure | None:
    if isinstance(raw, dict) and raw.get("value") is not None:
        return Figure(float(raw["value"]), raw.get("source", ""), raw.get("note", ""))
    if isinstance(gap, dict) and gap.get("value") is not None:
        return Figure(float(gap["value"]), "", "", gap.get("basis", f"no public figure for {what}"))
    return None


def parse_spec(spec: str) -> tuple[str, int | None]:
    name, _, count = spec.partition(":")
    if count:
        try:
            n = int(count)
        except ValueError:
            raise ClusterError(f"--cluster {spec}: the device count after ':' must be a whole number") from None
        if n < 1:
            raise ClusterError(f"--cluster {spec}: the device count must be at least 1")
        return name.strip(), n
    return name.strip(), None


def resolve(spec: str, assumptions: dict, dtype: str = "bf16") -> Cluster:
    """`NAME[:DEVICES]` to a Cluster; DEVICES defaults to one scale-up domain."""
    table = load_table()
    name, count = parse_spec(spec)
    if name not in table["clusters"]:
        raise ClusterError(f"unknown cluster {name!r}; `audit plan --clusters` lists them: "
                           + ", ".join(table["clusters"]))
    c = table["clusters"][name]
    dev_key = c["device"]
    dev = table["devices"][dev_key]
    gaps = assumptions.get("hardware_gaps", {})
    dev_gaps, cl_gaps = gaps.get(dev_key, {}), gaps.get(name, {})
    notes: list[str] = []
    want = DTYPE_ALIASES.get(dtype, dtype)
    peaks = dev.get("peak_tflops") or {}
    peak = _figure(peaks.get(want), (dev_gaps.get("peak_tflops") or {}).get(want), f"{dev['title']} {want} peak")
    used = want
    if peak is None:
        for alt in ("fp8", "hif8", "fp16", "bf16"):
            peak = _figure(peaks.get(alt), (dev_gaps.get("peak_tflops") or {}).get(alt))
            if peak is not None:
                used = alt
                notes.append(f"{dev['title']}: no {want} peak is published; planned at the {alt} peak "
                             f"({peak.value:g} TFLOPS), i.e. assuming an {alt} training recipe")
                break
    if peak is None:
        raise ClusterError(f"{name}: no peak throughput for {dev['title']} in the data or the assumptions")
    figs: dict[str, Figure] = {}
    for key in ("hbm_gb", "hbm_tb_s"):
        fig = _figure(dev.get(key), dev_gaps.get(key), f"{dev['title']} {key}")
        if fig is None:
            raise ClusterError(f"{name}: {key} of {dev['title']} is neither published nor assumed "
                               f"(add it under hardware_gaps in the assumptions file)")
        figs[key] = fig
    up = c["scale_up"]
    up_size = _figure(up["size"])
    if up_size is None:
        raise ClusterError(f"{name}: the size of a scale-up domain is not published")
    up_bw = _figure(up.get("gb_s"), cl_gaps.get("scale_up_gb_s"), f"{name} scale-up bandwidth")
    if up_bw is None:
        raise ClusterError(f"{name}: scale-up bandwidth is neither published nor assumed")
    out = c.get("scale_out") or {}
    out_bw = _figure(out.get("gb_s"), cl_gaps.get("scale_out_gb_s"), f"{name} scale-out bandwidth")
    devices = count or int(up_size.value)
    if out_bw is None and devices > up_size.value:
        raise ClusterError(f"{name}: {devices} devices is more than one scale-up domain ({int(up_size.value)}), and "
                           "no scale-out bandwidth between domains is published; plan at most "
                           f"{int(up_size.value)} devices or add scale_out_gb_s under hardware_gaps")
    status = c.get("status", dev.get("status", "shipping"))
    if status == "announced":
        notes.append(f"{c['title']}: announced, not shipped (available {c.get('available', dev.get('available', '?'))}); "
                     "its figures are the vendor's targets")
    return Cluster(name=name, title=c["title"], devices=devices, device_title=dev["title"], status=status,
                   available=str(c.get("available", dev.get("available", "")) or ""), dtype=used, peak_tflops=peak,
                   hbm_gb=figs["hbm_gb"], hbm_tb_s=figs["hbm_tb_s"], scale_up_size=up_size, scale_up_gb_s=up_bw,
                   scale_up_link=up.get("link", ""), scale_out_gb_s=out_bw, scale_out_link=out.get("link", ""),
                   notes=notes)


def list_clusters(assumptions: dict) -> list[dict]:
    rows = []
    for name in cluster_names():
        try:
            c = resolve(name, assumptions)
        except ClusterError as exc:
            rows.append({"name": name, "error": str(exc)})
            continue
        rows.append(c.to_dict())
    return rows
