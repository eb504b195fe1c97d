"""Answers "is this aten op / Python API / collective / custom op / env var / dtype supported on the
target?" from the generated tables in op_tables/ (see auditor/coverage/build.py and docs/coverage.md).

Loading is lazy per table and cached per process; nothing here imports torch.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from auditor.data import tables_dir
from auditor.target import PRODUCTS, Target

__all__ = ["Answer", "Coverage", "TablesMissing", "available_lines", "lookup"]

ANSWER_KEYS = ("symbol", "kind", "supported", "via", "products", "dtypes", "notes", "substitute", "source")


class TablesMissing(RuntimeError):
    """op_tables/ lacks a table; the message says how to rebuild it."""


@lru_cache(maxsize=None)
def _table(name: str) -> dict:
    path = tables_dir() / name
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise TablesMissing(f"coverage table {path} is missing; rebuild with `python -m auditor.coverage.build`") from None
    except json.JSONDecodeError as exc:
        raise TablesMissing(f"coverage table {path} is not valid JSON ({exc}); rebuild it") from None


def available_lines() -> list[str]:
    """torch_npu lines the tables cover, oldest first: ['v2.1', ..., 'v2.15']."""
    return list(_table("index.json")["lines"])


@dataclass(frozen=True)
class Answer:
    symbol: str
    kind: str                      # 'aten' | 'api' | 'collective' | 'custom_op' | 'env' | 'dtype' | 'unknown'
    supported: bool | str          # True, False or 'partial'
    via: str
    products: dict = field(default_factory=dict)
    dtypes: list = field(default_factory=list)
    notes: str = ""
    substitute: str | None = None
    source: str = ""

    def to_dict(self) -> dict:
        data = asdict(self)
        return {k: data[k] for k in ANSWER_KEYS}


def unknown(symbol: str, what: str = "symbol") -> Answer:
    return Answer(symbol=symbol, kind="unknown", supported=False, via="unknown",
                  notes=f"unknown {what} {symbol!r}: not in the coverage tables", source="")


def _line_key(line: str) -> tuple[int, int]:
    major, minor = line.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def _in_ranges(line: str, ranges: list[list[str]]) -> bool:
    return any(_line_key(lo) <= _line_key(line) <= _line_key(hi) for lo, hi in ranges)


def _ranges_text(ranges: list[list[str]]) -> str:
    return ", ".join(lo if lo == hi else f"{lo}..{hi}" for lo, hi in ranges)


def normalize_aten(op: str) -> str:
    """'aten::split.Tensor', 'aten.split.Tensor', 'torch.ops.aten.lgamma.default', 'lgamma' -> table key."""
    name = op.strip()
    for prefix in ("torch.ops.aten.", "aten::", "aten."):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if name.endswith(".default"):
        name = name[: -len(".default")]
    return name


_REDUCE_OP = re.compile(r"^(?:(?:torch\.distributed\.|dist\.)?ReduceOp\.)?([A-Z][A-Z_]*)$")
_COLLECTIVE_PREFIXES = ("torch.distributed.", "dist.", "torch.distributed.distributed_c10d.")


class Coverage:
    """The tables seen from one target (torch_npu line + product)."""

    _cache: dict[Target, "Coverage"] = {}

    def __init__(self, target: Target):
        if target.torch_npu not in available_lines():
            raise TablesMissing(f"no coverage tables for torch_npu {target.torch_npu}; "
                                f"known lines: {', '.join(available_lines())}")
        self.target = target
        index = _table("index.json")
        self.api_doc = index["api_docs"][target.torch_npu]
        self._answers: dict[tuple[str, str], Answer | None] = {}

    @classmethod
    def load(cls, target: Target) -> "Coverage":
        if target not in cls._cache:
            cls._cache[target] = cls(target)
        return cls._cache[target]

    # ---- aten -----------------------------------------------------------------------------------
    def _aten_status(self, key: str) -> tuple[bool | str, str, str, str]:
        """(supported, via, notes, source) of one aten overload on the target line."""
        table = _table("aten.json")
        row = table["ops"][key]
        line = self.target.torch_npu
        kernels = [k for k in ("op_api", "acl_op", "dvm", "torch_npu") if _in_ranges(line, row.get("npu", {}).get(k, []))]
        if kernels:
            notes = f"kernels on {line}: {', '.join(kernels)}"
            release = row.get("missing_in_wheels", {}).get(line)
            if release:
                notes += (f"; but the torch_npu {release} wheel does not register it "
                          "(op-plugin ranges follow the newest branch state)")
            source = row["source"] if kernels[0] != "torch_npu" else row["wheel_source"]
            return True, f"npu kernel ({kernels[0]})", notes, source
        elsewhere = "; ".join(f"{k}: {_ranges_text(r)}" for k, r in row.get("npu", {}).items() if r)
        other = f"NPU kernel only on other lines ({elsewhere}). " if elsewhere else ""
        composite = row.get("composite", [])
        plain = [k for k in composite if k != "CompositeExplicitAutogradNonFunctional"]
        dispatcher = table["composite_source"]
        if plain:
            return True, f"composite ({plain[0]})", other + "decomposes into other aten ops, which must be covered too", \
                f"{dispatcher}: aten::{key} has a {plain[0]} kernel"
        if composite:
            out = row.get("out")
            src = f"{dispatcher}: aten::{key} has a CompositeExplicitAutogradNonFunctional kernel"
            if out and out in table["ops"]:
                ok, via, _, out_src = self._aten_status(out)
                if ok is True:
                    return True, "composite (CompositeExplicitAutogradNonFunctional)", \
                        other + f"runs through {out}, covered by {via}", f"{src}; {out}: {out_src}"
                return False, "cpu fallback", other + (
                    f"CompositeExplicitAutogradNonFunctional, but its out= overload {out} is not covered on {line} "
                    f"({via})"), f"{src}; {out}: {out_src}"
            return False, "cpu fallback", other + "CompositeExplicitAutogradNonFunctional, but no out= overload with "\
                "the same arguments exists", src
        if row.get("not_in_torch"):
            return False, "absent", other + f"aten::{key} is not in torch {table['torch_version']}", row["source"]
        return False, "cpu fallback", other + ("no NPU kernel and no composite kernel: runs on the CPU at run time "
                                               "(an error when TORCH_NPU_FALLBACK_CPU_DISABLE=1)"), \
            (row.get("source", "") + "; " if row.get("source") else "") + \
            f"not registered for {line} in op-plugin/config/op_plugin_functions.yaml; {dispatcher}: no composite kernel"

    def aten(self, op: str) -> Answer:
        key = normalize_aten(op)
        ops = _table("aten.json")["ops"]
        if key not in ops:
            overloads = sorted(k for k in ops if k.split(".")[0] == key)
            if not overloads:
                return unknown(op, "aten operator")
            results = [(k, self._aten_status(k)) for k in overloads]
            good = [k for k, r in results if r[0] is True]
            supported: bool | str = True if len(good) == len(results) else ("partial" if good else False)
            bad = [f"{k} ({r[1]})" for k, r in results if r[0] is not True]
            return Answer(symbol=op, kind="aten", supported=supported,
                          via=f"{len(good)} of {len(results)} overloads covered",
                          products={p: supported for p in PRODUCTS}, notes=(
                              "not covered: " + ", ".join(bad) if bad else "all overloads covered")
                          + "; op-plugin registrations carry no product dimension",
                          source="; ".join(sorted({r[3] for _, r in results}))[:2000])
        supported, via, notes, source = self._aten_status(key)
        return Answer(symbol=op, kind="aten", supported=supported, via=via,
                      products={p: supported for p in PRODUCTS},
                      notes=notes + "; op-plugin registrations carry no product dimension", source=source)

    # ---- Python APIs ----------------------------------------------------------------------------
    def _api_sets(self) -> list[str]:
        """Support-list versions to consult: the target's own first, then older ones, then newer."""
        versions = sorted({v for v in _table("index.json")["api_docs"].values()}, key=_line_key)
        own = self.api_doc
        older = [v for v in versions if _line_key(v) < _line_key(own)][::-1]
        newer = [v for v in versions if _line_key(v) > _line_key(own)]
        return [own] + older + newer

    def _api_entry(self, qualname: str) -> tuple[str, dict] | None:
        for version in self._api_sets():
            entry = _table(f"api/torch-{version}.json")["apis"].get(qualname)
            if entry is not None:
                return version, entry
        return None

    def _api_answer(self, qualname: str, version: str, entry: dict, kind: str = "api") -> Answer:
        product = self.target.product
        products: dict[str, bool | str] = {}
        for p in PRODUCTS:
            if p in entry["products"]:
                products[p] = entry["products"][p]
            elif any(r["products"] and p in r["products"] for r in entry["restrictions"]):
                products[p] = True
            else:
                products[p] = "unverified"
        scoped = [r for r in entry["restrictions"] if r["products"] and product in r["products"]]
        general = [r for r in entry["restrictions"] if not r["products"]]
        applicable = scoped or general
        dtypes = list(applicable[0]["dtypes"]) if applicable else []
        state = products[product]
        notes = []
        if state == "unverified":
            supported: bool | str = "partial"
            via = "not verified on this product"
            notes.append(f"the torch {version} support list has no {product} column")
        elif state and entry.get("cpu_fallback"):
            supported, via = "partial", "cpu fallback"
            notes.append("the support list says it may fall back to the CPU")
        elif state:
            supported, via = True, "npu (support list)"
        else:
            supported, via = False, "unsupported (support list)"
        if applicable and len(applicable) > 1:
            notes.append("; ".join(f"{'/'.join(r['args'])}: {', '.join(r['dtypes'])}" for r in applicable))
        raw = re.sub(r"</?term>", "", entry.get("raw", ""))
        if raw:
            notes.append(raw)
        source = entry["source"]
        if version != self.api_doc:
            source += f" (not in the torch {self.api_doc} list used for {self.target.torch_npu}; answered from the {version} list)"
        return Answer(symbol=qualname, kind=kind, supported=supported, via=via, products=products, dtypes=dtypes,
                      notes="\n".join(notes), substitute=None, source=source)

    def api(self, qualname: str) -> Answer | None:
        name = qualname.strip()
        key = ("api", name)
        if key not in self._answers:
            found = self._api_entry(name)
            self._answers[key] = self._api_answer(name, *found) if found else None
        return self._answers[key]

    def unsupported_apis(self) -> dict[str, Answer]:
        """Python APIs the target's support list marks ✘ for the target product."""
        key = ("unsupported_apis", "")
        if key not in self._answers:
            apis = _table(f"api/torch-{self.api_doc}.json")["apis"]
            out = {name: self.api(name) for name, entry in sorted(apis.items())
                   if entry["products"].get(self.target.product) is False}
            self._answers[key] = out  # type: ignore[assignment]
        return self._answers[key]  # type: ignore[return-value]

    # ---- HCCL -----------------------------------------------------------------------------------
    def collective(self, name: str) -> Answer:
        hccl = _table("hccl.json")
        raw = name.strip()
        m = _REDUCE_OP.match(raw)
        if m and m.group(1) in hccl["reduce_ops"]:
            op = m.group(1)
            row = hccl["reduce_ops"][op]
            facts = hccl["facts"]["reduce_dtypes"]
            dtypes = sorted(set(facts["dtypes"]) | (set(facts["only_on_950"]) if self.target.product == "950" else set()))
            notes = {"raises": "HCCL raises for this reduce op", "emulated": "HCCL has no native kernel; torch_npu "
                     "emulates it (extra work, check numerics)", "hccl": "native HCCL reduce op"}[row["via"]]
            return Answer(symbol=raw, kind="collective", supported=row["supported"], via=row["via"],
                          products={p: row["supported"] for p in PRODUCTS}, dtypes=dtypes,
                          notes=f"{notes}; reduce dtypes: {facts['text']}", source=row["source"])
        short = raw
        for prefix in _COLLECTIVE_PREFIXES:
            if short.startswith(prefix):
                short = short[len(prefix):]
                break
        row = hccl["collectives"].get(short)
        if row is None:
            return unknown(raw, "collective")
        qualname = f"torch.distributed.{short}"
        found = self._api_entry(qualname)
        if found is None:
            note = row.get("design_note")
            return Answer(symbol=raw, kind="collective", supported="partial", via="not in the support list",
                          products={p: "unverified" for p in PRODUCTS},
                          notes=note["text"] if note else "", source=note["source"] if note else "")
        base = self._api_answer(raw, *found, kind="collective")
        per = row["by_torch"].get(found[0], {})
        supported, via, notes = base.supported, base.via, [base.notes] if base.notes else []
        if supported is True and (per.get("world_size_unsupported") or per.get("compatible_impl") or row.get("design_note")):
            supported = "partial"
        if per.get("world_size_unsupported"):
            notes.insert(0, "world_size " + ", ".join(map(str, per["world_size_unsupported"])) + " unsupported")
        if per.get("compatible_impl"):
            via = "hccl (differs from native PyTorch)"
            notes.insert(0, "behaviour differs from native PyTorch unless torch_npu.npu.use_compatible_impl(True)")
        source = base.source
        if row.get("design_note"):
            notes.insert(0, row["design_note"]["text"])
            source += "; " + row["design_note"]["source"]
        return Answer(symbol=raw, kind="collective", supported=supported, via=via, products=base.products,
                      dtypes=base.dtypes, notes="\n".join(notes), substitute=None, source=source)

    def rejected_world_sizes(self, name: str) -> list[int]:
        """Process-group sizes the support list rejects for a collective (the row `collective` answers from)."""
        short = name.rsplit(".", 1)[-1]
        row = _table("hccl.json")["collectives"].get(short)
        found = self._api_entry(f"torch.distributed.{short}") if row else None
        if found is None:
            return []
        return list(row["by_torch"].get(found[0], {}).get("world_size_unsupported", []))

    def hccl_fact(self, key: str) -> dict | None:
        """One of hccl.json's stated facts ('no_any_source_recv', 'reduce_dtypes', ...) with its source."""
        return _table("hccl.json")["facts"].get(key)

    # ---- custom ops -----------------------------------------------------------------------------
    def custom_op(self, name: str) -> Answer | None:
        raw = name.strip()
        key = raw
        for prefix in ("torch.ops.npu.", "torch_npu._C._VariableFunctionsClass.", "npu::"):
            if key.startswith(prefix):
                key = "torch_npu." + key[len(prefix):]
        if not key.startswith("torch_npu."):
            key = "torch_npu." + key
        key = re.sub(r"\.(default|out)$", "", key) if key.count(".") > 1 and key.split(".")[1].startswith("npu_") else key
        row = _table("custom_ops.json")["ops"].get(key)
        if row is None:
            return None
        line, product = self.target.torch_npu, self.target.product
        documented = bool(row["products"])
        products = {p: row["products"].get(p, False) if documented else "unverified" for p in PRODUCTS}
        on_line = row["lines"] is None or line in row["lines"]
        notes = []
        if row["lines"] is not None:
            notes.append(f"registered in op-plugin for {_ranges_text(_compress(row['lines']))}")
        if not documented:
            notes.append("no custom_APIs page: products undocumented")
        if row["layouts"]:
            notes.append("layouts: " + ", ".join(row["layouts"]))
        if row["signature"]:
            notes.append(row["signature"])
        state = products[product]
        if not on_line:
            supported: bool | str = False
            via = f"not in torch_npu {line}"
        elif state == "unverified":
            supported, via = "partial", "torch_npu custom op (products undocumented)"
        else:
            supported, via = bool(state), "torch_npu custom op" if state else "torch_npu custom op (not on this product)"
        if row.get("beta"):
            notes.append("beta API")
        substitute = None
        if row.get("deprecated"):
            substitute = row["deprecated"].get("replace")
            notes.append("deprecated" + (f": use {substitute}" if substitute else ""))
            if supported is True:
                supported = "partial"
        dtypes, dropped = self._product_dtypes(row["dtypes"].get(product, []))
        if dropped:
            notes.append(f"the page lists {', '.join(dropped)}, which the {product} profile lacks")
        return Answer(symbol=raw, kind="custom_op", supported=supported, via=via, products=products,
                      dtypes=dtypes, notes="\n".join(notes), substitute=substitute,
                      source=row["source"] + ("; " + row["deprecated"]["source"] if row.get("deprecated") else ""))

    def _product_dtypes(self, dtypes: list[str]) -> tuple[list[str], list[str]]:
        """Split a page's dtype list into those the target product has and those its profile lacks."""
        profile = _table("products.json")["profiles"][self.target.product]["dtypes"]
        lacking = [d for d in dtypes if profile.get(_dtype_family(d), {}).get("supported") is False]
        return [d for d in dtypes if d not in lacking], lacking

    # ---- environment variables ------------------------------------------------------------------
    def env_var(self, name: str) -> Answer | None:
        env = _table("env.json")
        raw = name.strip()
        var = env["variables"].get(raw)
        if var is not None:
            products = {p: (p in var["products"]) if var["products"] else "unverified" for p in PRODUCTS}
            state = products[self.target.product]
            notes = [var.get("meaning_en", ""), var["meaning"]]
            for label, value in (("default", var.get("default")), ("unit", var.get("unit")),
                                 ("advice", var.get("advice")), ("NCCL/CUDA counterpart",
                                                                  ", ".join(var.get("cuda_counterparts", []))),
                                 ("", var.get("notes"))):
                if value:
                    notes.append(f"{label}: {value}" if label else value)
            return Answer(symbol=raw, kind="env", supported="partial" if state == "unverified" else state,
                          via="Ascend environment variable", products=products, notes="\n".join(n for n in notes if n),
                          source=var["source"])
        counterpart = env["cuda_counterparts"].get(raw)
        if counterpart is None:  # wildcard rows such as TORCH_NCCL_* -> TORCH_HCCL_*
            for pattern, row in env["cuda_counterparts"].items():
                if pattern.endswith("*") and raw.startswith(pattern[:-1]):
                    rest = raw[len(pattern) - 1:]
                    counterpart = dict(row, ascend=[a.replace("*", rest) for a in row["ascend"]])
                    break
        if counterpart is None:
            return None
        notes = [f"{raw} has no effect on Ascend; set {' or '.join(counterpart['ascend'])}"]
        if counterpart.get("cuda_unit") or counterpart.get("ascend_unit"):
            notes.append(f"units differ: {raw} in {counterpart.get('cuda_unit') or '?'}, "
                         f"{counterpart['ascend'][0]} in {counterpart.get('ascend_unit') or '?'}")
        documented = [a for a in counterpart["ascend"] if a in env["variables"]]
        source = counterpart["source"] + "".join("; " + env["variables"][a]["source"] for a in documented)
        return Answer(symbol=raw, kind="env", supported=False, via="CUDA/NCCL variable (ignored on NPU)",
                      products={p: False for p in PRODUCTS}, notes="\n".join(notes),
                      substitute=" / ".join(counterpart["ascend"]), source=source)

    # ---- dtypes, fusion -------------------------------------------------------------------------
    def dtype_answer(self, dtype: str) -> Answer:
        from auditor.coverage.products import normalize_dtype

        raw = dtype.strip()
        name = normalize_dtype(raw) or raw.lower().removeprefix("torch.")
        family = _dtype_family(name)
        profiles = _table("products.json")["profiles"]
        rows = {p: profiles[p]["dtypes"].get(family) for p in PRODUCTS}
        if rows[self.target.product] is None:
            if normalize_dtype(raw) is None:
                return unknown(raw, "dtype")
            return Answer(symbol=raw, kind="dtype", supported=True, via="all products",
                          products={p: True for p in PRODUCTS}, dtypes=[name],
                          notes="no product restriction recorded for this dtype; per-op limits still apply",
                          source=_table("products.json")["source"])
        row = rows[self.target.product]
        examples = f", e.g. {', '.join(row['evidence'][:3])}" if row["evidence"] else ""
        if row["supported"]:
            notes = f"{row['evidence_count']} API entries list {family} for this product{examples}"
        elif not row["evidence"]:
            notes = f"no Ascend page lists {family} for {self.target.product}"
        else:
            notes = f"{self.target.product} has no {family}; the per-API dtype lists that mention it anyway " \
                    f"({row['evidence_count']}{examples}) do not scope it by product"
        return Answer(symbol=raw, kind="dtype", supported=row["supported"], via=f"product profile {self.target.product}",
                      products={p: r["supported"] for p, r in rows.items()}, dtypes=[name], notes=notes,
                      source=row["source"])

    def dtype_supported(self, dtype: str) -> bool:
        return self.dtype_answer(dtype).supported is True

    def fusion_patterns(self) -> list[dict]:
        return [dict(p) for p in _table("fusion.json")["patterns"]]


def _dtype_family(name: str) -> str:
    """The profile key of a dtype: every 8-bit float shares 'float8'."""
    return "float8" if name.startswith("float8") or name in ("fp8", "hifloat8") else name


def _compress(lines: list[str]) -> list[list[str]]:
    all_lines = available_lines()
    runs: list[list[str]] = []
    for line in lines:
        if runs and all_lines.index(runs[-1][1]) == all_lines.index(line) - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return runs


_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*\*?$")


def _api_to_aten(qualname: str) -> str | None:
    """torch.linalg.eig -> linalg_eig; torch.nn.functional.gelu -> gelu; torch.Tensor.lgamma -> lgamma."""
    for prefix, pre in (("torch.nn.functional.", ""), ("torch.Tensor.", ""), ("torch.linalg.", "linalg_"),
                        ("torch.special.", "special_"), ("torch.fft.", "fft_"), ("torch.", "")):
        if qualname.startswith(prefix):
            rest = qualname[len(prefix):]
            return pre + rest if "." not in rest else None
    return None


def lookup(symbol: str, target: Target) -> Answer:
    """One answer for `audit ops`, whatever the kind of symbol."""
    cov = Coverage.load(target)
    s = symbol.strip()
    if not s:
        return unknown(symbol)
    if s.startswith(("aten::", "aten.", "torch.ops.aten.")):
        return cov.aten(s)
    if s.startswith(("torch_npu.", "torch.ops.npu.", "npu::")):
        return cov.custom_op(s) or cov.api(s) or unknown(s, "torch_npu API")
    if _REDUCE_OP.match(s) and not _ENV_NAME.match(s) or s.startswith(("torch.distributed.ReduceOp.", "dist.ReduceOp.", "ReduceOp.")):
        answer = cov.collective(s)
        return answer
    if s.startswith(_COLLECTIVE_PREFIXES):
        answer = cov.collective(s)
        if answer.kind != "unknown":
            return answer
        return cov.api(s.replace("dist.", "torch.distributed.", 1) if s.startswith("dist.") else s) or unknown(s)
    if s.startswith("torch."):
        answer = cov.api(s)
        if answer is not None:
            return answer
        aten_name = _api_to_aten(s)
        if aten_name:
            via_aten = cov.aten(aten_name)
            if via_aten.kind != "unknown":
                return Answer(symbol=s, kind="api", supported=via_aten.supported, via=via_aten.via,
                              products=via_aten.products, dtypes=[], notes=(
                                  f"not in the torch {cov.api_doc} support list (unverified); answered from "
                                  f"aten::{normalize_aten(aten_name)}: {via_aten.notes}"),
                              substitute=None, source=via_aten.source)
        return unknown(s, "Python API")
    if _ENV_NAME.match(s):
        env = cov.env_var(s)
        if env is not None:
            return env
        red = cov.collective(s)
        return red if red.kind != "unknown" else unknown(s)
    answer = cov.aten(s)
    if answer.kind != "unknown":
        return answer
    return cov.custom_op(s) or cov.env_var(s) or unknown(s)
