"""Answers "is this aten op / Python API / collective / custom op / env var / dtype supported on the
target?" from the generated tables in op_tables/ (see auditor/coverage/build.py and docs/coverage.md).

Loading is lazy per table and cached per process; nothing here imports torch.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from auditor.data import TablesMissing
from auditor.data import load_table as _table
from auditor.target import PRODUCTS, Target, available_lines

__all__ = ["Answer", "Coverage", "TablesMissing", "available_lines", "lookup", "unsupported_api_details"]

ANSWER_KEYS = ("symbol", "kind", "supported", "via", "products", "dtypes", "notes", "substitute", "source")


@dataclass(frozen=True)
class Answer:
    symbol: str
    kind: str                      # 'aten' | 'api' | 'collective' | 'custom_op' | 'env' | 'dtype' | 'unknown'
    supported: bool | str | None   # True (yes), False (no), 'unverified' (sources silent: notes say which
                                   # row, column or product is missing), None (unknown symbol: no verdict)
    via: str
    products: dict = field(default_factory=dict)
    dtypes: list = field(default_factory=list)
    notes: str = ""
    substitute: str | None = None
    source: str = ""

    def to_dict(self) -> dict:
        data = asdict(self)
        return {k: data[k] for k in ANSWER_KEYS}


UNVERIFIED = "unverified"
FIRST_950_LINE = "v2.7"   # the oldest native_api support list with an Ascend 950DT column is torch 2.7.1
_STATUS: dict[str, bool | str] = {"yes": True, "no": False, "unverified": UNVERIFIED}


def unknown(symbol: str, what: str = "symbol", hint_close: bool = True) -> Answer:
    """No verdict: the symbol is in none of the tables (a suggestion when a known name is close, unless
    `hint_close` is False: a caller that only reads the kind skips the fuzzy search over every known name)."""
    hint = suggest(symbol) if hint_close else []
    return Answer(symbol=symbol, kind="unknown", supported=None, via="unknown",
                  notes=f"unknown {what} {symbol!r}: not in the coverage tables"
                        + (f"; did you mean {' or '.join(hint)}?" if hint else ""), source="")


@lru_cache(maxsize=None)
def _known_names() -> tuple[str, ...]:
    names: set[str] = set()
    names.update("aten::" + k for k in _table("aten.json")["ops"])
    for version in set(_table("index.json")["api_docs"].values()):
        names.update(_table(f"api/torch-{version}.json")["apis"])
    names.update(_table("custom_ops.json")["ops"])
    names.update(_table("env.json")["variables"])
    names.update("torch.distributed." + k for k in _table("hccl.json")["collectives"])
    names.update(_table("private_apis.json")["apis"])
    # CUDA / NCCL variables the tables answer for (no effect on Ascend, with their Ascend spelling): the
    # env-var rules hold the names read from torch (rules/gen/env_vars.py)
    from auditor.rules import load_rules

    names.update(sym for rule in load_rules() if "env" in rule.match for sym in rule.symbols)
    return tuple(sorted(names))


def suggest(symbol: str) -> list[str]:
    import difflib

    s = symbol.strip()
    if not s:
        return []
    pool = _known_names()
    if _ENV_NAME.match(s):   # an environment variable: the names the tables answer for, whatever the prefix
        return difflib.get_close_matches(s, tuple(n for n in pool if _ENV_NAME.match(n)), n=2, cutoff=0.85)
    if s.startswith("torch.") or s.startswith("torch_npu.") or s.startswith("aten::"):
        prefix = s.split(".")[0] if not s.startswith("aten::") else "aten::"
        close = difflib.get_close_matches(s, tuple(n for n in pool if n.startswith(prefix)), n=2, cutoff=0.85)
        if close:
            return close
    return difflib.get_close_matches(s, pool, n=2, cutoff=0.85)   # the typo may be in the prefix itself


@lru_cache(maxsize=None)
def _members_by_class(version: str) -> dict[str, list[str]]:
    """Support-list rows of members, by their class (a dotted name whose last part is capitalised)."""
    out: dict[str, list[str]] = {}
    for name in _table(f"api/torch-{version}.json")["apis"]:
        head = name.rpartition(".")[0]
        if head.rpartition(".")[2][:1].isupper():
            out.setdefault(head, []).append(name)
    return out


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


_FALLBACK_SWITCH = "TORCH_NPU_FALLBACK_CPU_DISABLE"
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
    def _aten_status(self, key: str) -> tuple[bool | str, str, str, str, dict]:
        """(supported, via, notes, source, products) of one aten overload on the target line."""
        table = _table("aten.json")
        row = table["ops"][key]
        line = self.target.torch_npu
        strings = table["strings"]
        fill = table["line_inputs"][line]
        run = next(r for r in row["lines"] if _line_key(r[0]) <= _line_key(line) <= _line_key(r[1]))
        status, via, note = _STATUS[run[2]], strings[run[3]], strings[run[4]]
        source = "; ".join(strings[i] for i in run[5])
        for name, value in fill.items():
            note, source = note.replace("{" + name + "}", value), source.replace("{" + name + "}", value)
        if _FALLBACK_SWITCH in note:
            note = note.replace(f" (an error when {_FALLBACK_SWITCH}=1)", self._fallback_switch_note())
        products: dict[str, bool | str] = {p: status for p in PRODUCTS}
        chain = re.match(r"^(?:structured|autogen out=) \((.+)\)$", via)
        if status is True and chain and chain.group(1) in table["ops"] and chain.group(1) != key:
            products = dict(self._aten_status(chain.group(1))[4])   # the overload that does the work decides
        elif status is True:
            # a registration has no product dimension: it speaks for the products the line's own package
            # names under "Hardware support"; 910A only with an acl_op kernel (aclnn kernels: no source states
            # them for the Atlas training series)
            hardware = self._hardware()
            kinds = [k for k, ranges in row.get("npu", {}).items() if _in_ranges(line, ranges)]
            for p in PRODUCTS:
                if p not in hardware.get("products", ()) or (p == "910a" and "acl_op" not in kinds):
                    products[p] = UNVERIFIED
            if hardware:
                source += f"; {hardware['source']}"
        if status is not False and _line_key(line) < _line_key(FIRST_950_LINE):
            products["950"] = UNVERIFIED   # no source names Ascend 950DT for lines before its first support list
        return status, via, note, source, products

    def _fallback_switch_note(self) -> str:
        """How the line's torch_npu reads the switch that turns CPU fallback into an error: only wheels that
        contain the name read it (2.7.1 and 2.10 on; not 2.1 ... 2.6, 2.8, 2.9)."""
        wheel = self._wheel_env()
        if not wheel or wheel.get("stand_in"):
            return ""
        if _FALLBACK_SWITCH in wheel["names"]:
            return f" (an error when {_FALLBACK_SWITCH}=1; read in {wheel['wheel']}: {wheel['names'][_FALLBACK_SWITCH]})"
        return f" (the {wheel['wheel']} wheel does not read {_FALLBACK_SWITCH}: no switch turns the fallback into an error)"

    def product_unstated(self, op: str) -> bool:
        """The line registers an NPU kernel for this aten overload, but no source states the target product
        for the line (its wheel's "Hardware support" list leaves the product out, or the line has none)."""
        key = normalize_aten(op)
        if key not in _table("aten.json")["ops"]:
            return False
        status, _, _, _, products = self._aten_status(key)
        return status is True and products[self.target.product] == UNVERIFIED

    def _hardware(self) -> dict:
        """The products the target line's own torch_npu wheel names under "Hardware support" ({} if none)."""
        return _table("index.json").get("hardware", {}).get(self.target.torch_npu, {})

    def _product_unverified_note(self, op_kinds_note: str) -> str:
        """Why a registered kernel is not a definite answer for the target product."""
        product, hardware = self.target.product, self._hardware()
        if product == "910a" and "910a" in hardware.get("products", ()):
            return f"910a: unverified ({op_kinds_note})"
        if not hardware:
            return (f"{product}: unverified (no hardware list for torch_npu {self.target.torch_npu}: its own wheel "
                    "is missing or its package description lists no supported products)")
        return (f"{product}: unverified (the line's package description lists only "
                f"{'; '.join(hardware['series'])} under Hardware support)")

    def aten(self, op: str, hint_close: bool = True) -> Answer:
        key = normalize_aten(op)
        ops = _table("aten.json")["ops"]
        product = self.target.product
        note_products = ("kernel registrations carry no product dimension: a registered kernel is a yes only on the "
                         "products the line's torch_npu package lists under Hardware support (910A only with an "
                         "acl_op kernel)")
        if key not in ops:
            overloads = sorted(k for k in ops if k.split(".")[0] == key)
            if not overloads:
                return unknown(op, "aten operator", hint_close)
            results = [(k, self._aten_status(k)) for k in overloads]
            results = [(k, r) for k, r in results if r[1] != "absent"] or results
            states = [r[4][product] for _, r in results]
            supported: bool | str = (True if all(s is True for s in states) else
                                     False if all(s is False for s in states) else UNVERIFIED)
            bad = [f"{k} ({r[1]})" for k, r in results if r[4][product] is not True]
            products = {p: (True if all(r[4][p] is True for _, r in results) else
                            False if all(r[4][p] is False for _, r in results) else UNVERIFIED) for p in PRODUCTS}
            return Answer(symbol=op, kind="aten", supported=supported,
                          via=f"{len(results) - len(bad)} of {len(results)} overloads covered",
                          products=products, notes=(
                              "not covered or unverified: " + ", ".join(bad) if bad else "all overloads covered")
                          + "; " + note_products,
                          source="; ".join(sorted({r[3] for _, r in results}))[:2000])
        supported, via, notes, source, products = self._aten_status(key)
        if products[product] != supported:
            notes += "; " + self._product_unverified_note("only aclnn kernels are registered")
        return Answer(symbol=op, kind="aten", supported=products[product], via=via, products=products,
                      notes=notes + "; " + note_products, source=source)

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
                products[p] = UNVERIFIED
        if _line_key(self.target.torch_npu) < _line_key(FIRST_950_LINE):
            products["950"] = UNVERIFIED   # the list's 950DT column (✔ or ✘) is for a newer torch than this line's
        scoped = [r for r in entry["restrictions"] if r["products"] and product in r["products"]]
        general = [r for r in entry["restrictions"] if not r["products"]]
        applicable = scoped or general
        dtypes = list(applicable[0]["dtypes"]) if applicable else []
        notes = []
        absent = self._absent_in_line_torch(qualname, version)
        contradiction = self._contradiction(qualname, entry, products) if products[product] is False else None
        if absent:
            supported: bool | str = False
            via = "absent"
            notes.append(absent)
            products = {p: False for p in PRODUCTS}
        elif products[product] == UNVERIFIED:
            supported, via = UNVERIFIED, "not verified on this product"
            notes.append(f"the torch {version} support list has no {product} column" if product != "950" else
                         f"no support list names Ascend 950DT for {self.target.torch_npu} (the first with a "
                         "950DT column is for torch 2.7.1)")
        elif contradiction:
            supported, via = UNVERIFIED, "support list contradicts kernel registrations"
            products[product] = UNVERIFIED
            notes.append(contradiction)
        elif products[product] and entry.get("cpu_fallback"):
            supported, via = True, "npu (support list), may fall back to the CPU"
            notes.append("the support list says it may fall back to the CPU")
        elif products[product]:
            supported, via = True, "npu (support list)"
        else:
            supported, via = False, "unsupported (support list)"
        tv = self._torch_version()
        if version != tv and not absent:
            # the list is for another torch than the line's: its ✔ / ✘ is not a statement about this line
            # (F.scaled_mm is new in torch 2.10, torch.onnx.dynamo_export gone by 2.13); only "absent",
            # read from the line's own torch, is definite
            if supported in (True, False):
                mark = "✔" if supported else "✘"
                # first line generic: the tracer groups unverified APIs by it (one decision, many APIs)
                notes[0:0] = [f"unverified: answered from the torch {version} support list; there is no support "
                              f"list for torch {tv}, which {self.target.torch_npu} builds on",
                              f"the torch {version} support list marks {qualname} {mark} for {product}"]
                supported, via = UNVERIFIED, f"support list of another torch ({version})"
            products = {p: UNVERIFIED for p in PRODUCTS}
        if applicable and len(applicable) > 1:
            notes.append("; ".join(f"{'/'.join(r['args'])}: {', '.join(r['dtypes'])}" for r in applicable))
        raw = re.sub(r"</?term>", "", entry.get("raw", ""))
        if raw:
            notes.append(raw)
        source = entry["source"]
        if contradiction and via == "support list contradicts kernel registrations":
            source += "; " + self._contradiction_source   # where the kernel registration is read
        if version != self.api_doc:
            source += f" (not in the torch {self.api_doc} list used for {self.target.torch_npu}; answered from the {version} list)"
        return Answer(symbol=qualname, kind=kind, supported=supported, via=via, products=products, dtypes=dtypes,
                      notes="\n".join(notes), substitute=None, source=source)

    def _torch_version(self) -> str:
        return _table("index.json")["torch_versions"][self.target.torch_npu]

    def _absent_in_line_torch(self, qualname: str, version: str) -> str | None:
        """Why the API does not exist in the torch of the target line (its module or its aten op is missing)."""
        index = _table("index.json")
        missing = index.get("missing_modules", {}).get(self._torch_version(), [])
        for module in missing:
            if qualname == module or qualname.startswith(module + "."):
                return (f"module {module} does not exist in torch {self._torch_version()} (the torch "
                        f"{self.target.torch_npu} builds on; source: {index['torch_wheels'][self._torch_version()]})")
        # an API defined over its own aten op (F.rms_norm -> aten::rms_norm) is absent with it; Tensor
        # methods and torch.* names can predate their aten entry (Tensor.dim, aten::dim only from 2.12)
        aten_name = _api_to_aten(qualname) if qualname.startswith(_ATEN_BOUND) else None
        if aten_name:
            key = normalize_aten(aten_name)
            ops = _table("aten.json")["ops"]
            keys = [key] if key in ops else [k for k in ops if k.split(".")[0] == key]
            if keys and all(self._aten_status(k)[1] == "absent" for k in keys):
                return f"aten::{key} does not exist in torch {self._torch_version()}, so neither does {qualname}"
        return None

    def _contradiction(self, qualname: str, entry: dict, products: dict) -> str | None:
        """A ✘ for the target product that the kernel registrations do not bear out: the aten op the API
        lowers to is registered (registrations carry no product dimension)."""
        aten_name = _api_to_aten(qualname) or _module_to_aten(qualname)
        if not aten_name:
            return None
        answer = self.aten(aten_name, hint_close=False)    # an unknown op's notes are not read here
        if answer.kind == "unknown" or answer.supported is not True:
            return None   # only kernels shown to be registered contradict a ✘
        listed_ok = [p for p, v in entry["products"].items() if v is True]
        title = {"950": "Ascend 950DT", "a2": "Atlas A2", "a3": "Atlas A3"}.get(self.target.product, self.target.product)
        self._contradiction_source = answer.source
        return (f"the support list marks {qualname} ✘ for {title}"
                + (f" (✔ for {', '.join(listed_ok)})" if listed_ok else "")
                + f", but aten::{normalize_aten(aten_name)} is '{answer.via}' on {self.target.torch_npu} "
                "(yes), and kernel registrations carry no "
                "product dimension: the ✘ is not confirmed by the registrations, so this is unverified")

    def api(self, qualname: str) -> Answer | None:
        name = canonical_api(qualname.strip())
        key = ("api", name)
        if key not in self._answers:
            found = self._api_entry(name)
            self._answers[key] = (self._api_answer(name, *found) if found else
                                  self._private_api(name) or self._class_from_members(name))
        return self._answers[key]

    def _class_from_members(self, name: str) -> Answer | None:
        """A class the support list rates only through its members (`> forward()` under the class heading,
        no row of its own).  A module is used by calling it, which runs forward(): forward's row answers for
        it.  Any other member's row does not rate the class: unverified, with the members' answers."""
        for version in self._api_sets():
            members = _members_by_class(version).get(name)
            if members:
                break
        else:
            return None
        apis = _table(f"api/torch-{version}.json")["apis"]
        forward = name + ".forward"
        if forward in members:
            ans = self._api_answer(forward, version, apis[forward])
            note = (f"the torch {version} support list has no row for {name} itself; calling the module runs "
                    f"{forward}, whose row answers for it")
            return Answer(symbol=name, kind="api", supported=ans.supported, via=ans.via, products=ans.products,
                          dtypes=ans.dtypes, notes="\n".join(n for n in (note, ans.notes) if n),
                          substitute=None, source=ans.source)
        answers = [self._api_answer(m, version, apis[m]) for m in members]
        absent = self._absent_in_line_torch(name, version)
        mark = {True: "yes", False: "no", UNVERIFIED: "unverified"}
        listed = ", ".join(f"{a.symbol.rsplit('.', 1)[1]}: {mark.get(a.supported, a.supported)}" for a in answers[:6])
        notes = [f"the torch {version} support list has no row for {name} itself, only for {len(members)} of its "
                 f"members ({listed}{', ...' if len(members) > 6 else ''} on {self.target.product}); a member's "
                 "row does not rate the class"]
        if absent:
            notes.insert(0, absent)
        state: bool | str = False if absent else UNVERIFIED
        return Answer(symbol=name, kind="api", supported=state, via="absent" if absent else
                      "class rated only through its members", products={p: state for p in PRODUCTS},
                      dtypes=[], notes="\n".join(notes), substitute=None, source=answers[0].source)

    def _private_api(self, name: str) -> Answer | None:
        row = _table("private_apis.json")["apis"].get(name)
        if row is None:
            return None
        product = self.target.product
        products: dict[str, bool | str] = {p: UNVERIFIED for p in PRODUCTS}
        if row["supported"]:
            for p in ("a2", "a3", "950"):
                products[p] = p not in row["not_on"]
        else:
            products.update({p: False for p in ("a2", "a3", "950")})
        notes = ["private_apis.md names no product; 是 (supported) is read as Atlas A2 / A3 / Ascend 950DT, "
                 "910A / 310P unverified"]
        if _line_key(self.target.torch_npu) < _line_key(FIRST_950_LINE):
            # the page carries no version, and no support list names 950DT before torch 2.7.1
            products["950"] = UNVERIFIED
            if product == "950":
                notes.insert(0, f"no support list names Ascend 950DT for {self.target.torch_npu} (the first with a "
                                "950DT column is for torch 2.7.1); private_apis.md carries no version")
        supported, via = products[product], "private API list"
        tv = self._torch_version()
        if row["min_torch"] and _line_key(tv) < _line_key(row["min_torch"]):
            supported, via = False, "not in this torch version (private API list)"
            notes.insert(0, f"only PyTorch {row['min_torch']} and later; {self.target.torch_npu} builds on torch {tv}")
        if row["raw"]:
            notes.append(row["raw"])
        return Answer(symbol=name, kind="api", supported=supported, via=via, products=products, dtypes=row["dtypes"],
                      notes="\n".join(notes), substitute=row.get("npu_name"), source=row["source"])

    def unsupported_apis(self) -> dict[str, Answer]:
        """Python APIs the target's support list marks ✘ for the target product."""
        key = ("unsupported_apis", "")
        if key not in self._answers:
            apis = _table(f"api/torch-{self.api_doc}.json")["apis"]
            out = {name: ans for name, ans in self._marked_unsupported().items() if ans.supported is False}
            for name in sorted(n.removesuffix(".forward") for n in out if n.endswith(".forward")):
                if name not in apis and (ans := self.api(name)) is not None and ans.supported is False:
                    out[name] = ans   # the class itself is what code constructs and calls
            self._answers[key] = out  # type: ignore[assignment]
        return self._answers[key]  # type: ignore[return-value]

    def unverified_unsupported_apis(self) -> dict[str, Answer]:
        """Python APIs that only another torch's support list marks ✘ for the target product (the line has no
        list of its own): unverified, not a definite no, but the nearest source's hint (NPU502)."""
        key = ("unverified_unsupported_apis", "")
        if key not in self._answers:
            self._answers[key] = {  # type: ignore[assignment]
                name: ans for name, ans in self._marked_unsupported().items()
                if ans.supported == UNVERIFIED and ans.via.startswith("support list of another torch")}
        return self._answers[key]  # type: ignore[return-value]

    def _marked_unsupported(self) -> dict[str, Answer]:
        """The answers for every API the support list used for the target line marks ✘ for its product (the
        line's own list: definite; another torch's: unverified)."""
        apis = _table(f"api/torch-{self.api_doc}.json")["apis"]
        return {name: ans for name, entry in sorted(apis.items())
                if entry["products"].get(self.target.product) is False and (ans := self.api(name)) is not None}

    # ---- HCCL -----------------------------------------------------------------------------------
    def collective(self, name: str) -> Answer:
        hccl = _table("hccl.json")
        raw = name.strip()
        m = _REDUCE_OP.match(raw)
        if m and m.group(1) in hccl["reduce_ops"]:
            op = m.group(1)
            row = hccl["reduce_ops"][op]["by_line"][self.target.torch_npu]
            status = _STATUS[row["status"]]
            notes, source = [row["note"]], [row["source"]] if row["source"] else []
            dtypes: list[str] = []
            found = self._api_entry("torch.distributed.all_reduce")
            ar = self._api_answer("torch.distributed.all_reduce", *found) if found else None
            # dtypes only from a list that speaks for this line and product (not another torch's, no missing column)
            if ar is not None and ar.products.get(self.target.product) is True:
                dtypes = ar.dtypes
                notes.append(f"reduction dtypes on {self.target.product} (torch.distributed.all_reduce): "
                             f"{', '.join(dtypes) or 'not listed'}")
                source.append(ar.source)
            cls = self._api_entry("torch.distributed.ReduceOp")
            if cls:
                source.append(cls[1]["source"])
            how = row.get("how", "")
            via = {"native": "hccl native", "emulated": "emulated on HCCL", "raises": "raises on HCCL"}.get(
                how, "unverified per member")
            # torch_npu's mapping has no product dimension: a member that raises raises everywhere; one that
            # works is a yes only where the line's own support list states all_reduce for the product
            products = {p: status for p in PRODUCTS}
            if status is True:
                products = {p: True if ar is not None and ar.products.get(p) is True else UNVERIFIED
                            for p in PRODUCTS}
                if products[self.target.product] is not True:
                    notes.append(f"{self.target.product}: unverified (no support list for this line states "
                                 f"torch.distributed.all_reduce on {self.target.product})")
            return Answer(symbol=raw, kind="collective", supported=products[self.target.product], via=via,
                          products=products, dtypes=dtypes, notes="\n".join(notes), source="; ".join(source))
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
            return Answer(symbol=raw, kind="collective", supported=UNVERIFIED, via="not in the support list",
                          products={p: UNVERIFIED for p in PRODUCTS}, notes="no support list row", source="")
        base = self._api_answer(raw, *found, kind="collective")
        per = row["by_torch"].get(found[0], {})
        supported, via, notes = base.supported, base.via, [base.notes] if base.notes else []
        if per.get("world_size_unsupported"):
            notes.insert(0, "world_size " + ", ".join(map(str, per["world_size_unsupported"])) + " unsupported")
        if per.get("compatible_impl"):
            via = "hccl (differs from native PyTorch)" if supported is True else via
            notes.insert(0, "behaviour differs from native PyTorch unless torch_npu.npu.use_compatible_impl(True)")
        return Answer(symbol=raw, kind="collective", supported=supported, via=via, products=base.products,
                      dtypes=base.dtypes, notes="\n".join(notes), substitute=None, source=base.source)

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
        ops = _table("custom_ops.json")["ops"]
        if not key.startswith("torch_npu.") and key not in ops:   # pages also document torch.npu.* / torch.distributed.*
            key = "torch_npu." + key
        key = re.sub(r"\.(default|out)$", "", key) if key.count(".") > 1 and key.split(".")[1].startswith("npu_") else key
        if key not in ops and key.startswith("torch_npu.npu.") and "torch." + key[len("torch_npu."):] in ops:
            key = "torch." + key[len("torch_npu."):]   # torch.npu is torch_npu.npu: one page, either spelling
        row = ops.get(key)
        if row is None:
            return None
        line, product = self.target.torch_npu, self.target.product
        documented = bool(row["products"])
        # a product the page's table leaves out is unverified, not unsupported
        products = {p: row["products"].get(p, UNVERIFIED) if documented else UNVERIFIED for p in PRODUCTS}
        if _line_key(self.target.torch_npu) < _line_key(FIRST_950_LINE):
            products["950"] = UNVERIFIED   # the page carries no version; no list names 950DT this early
        on_line = row["lines"] is None or line in row["lines"]
        missing_wheel = row.get("not_in_wheel", {}).get(line)
        notes = []
        if row["lines"] is not None:
            notes.append(f"registered in op-plugin for {_ranges_text(_compress(row['lines']))}")
        if missing_wheel:
            notes.append(f"op-plugin lists it for {line}, but the {missing_wheel} wheel (the line's newest "
                         "release) does not register it")
        if not documented:
            notes.append("no custom_APIs page: products undocumented")
        if row["layouts"]:
            notes.append("layouts: " + ", ".join(row["layouts"]))
        if row["signature"]:
            notes.append(row["signature"])
        state = products[product]
        wheel = (self._wheel_env() or {}) if row["lines"] is None else {}
        in_wheel = wheel.get("python_apis", {}).get(key)
        no_wheel = bool(wheel.get("stand_in") and state is True)
        if no_wheel:
            state = UNVERIFIED   # the page carries no version and the line has no wheel of its own to show the name
            products = {p: UNVERIFIED if v is True else v for p, v in products.items()}
            notes.append(f"no torch_npu wheel of {line} to check the name in ({wheel['wheel']})")
        if in_wheel == "" and not wheel.get("stand_in"):
            on_line = False   # the page carries no version; the line's wheel does not define the name
            notes.insert(0, f"the {wheel.get('wheel')} wheel's module does not define {key.rsplit('.', 1)[1]}")
        if not on_line:
            supported: bool | str = False
            via = f"not in torch_npu {line}" if in_wheel != "" else "absent"
            if in_wheel == "":
                products = {p: False for p in PRODUCTS}
        elif missing_wheel:
            supported, via = UNVERIFIED, "not in the line's release"
            products = {p: UNVERIFIED for p in PRODUCTS}
        elif no_wheel:
            supported, via = UNVERIFIED, "torch_npu custom op (no wheel of the line)"
        elif state == UNVERIFIED:
            supported, via = UNVERIFIED, "torch_npu custom op (product not on its page)"
        else:
            supported, via = bool(state), "torch_npu custom op" if state else "torch_npu custom op (not on this product)"
        if row.get("beta"):
            notes.append("beta API")
        substitute = None
        if row.get("deprecated"):
            substitute = row["deprecated"].get("replace")
            notes.append("deprecated" + (f": use {substitute}" if substitute else ""))
        dtypes, dropped = self._product_dtypes(row["dtypes"].get(product, []))
        if dropped:
            notes.append(f"the page lists {', '.join(dropped)}, which the {product} profile lacks")
        return Answer(symbol=raw, kind="custom_op", supported=supported, via=via, products=products,
                      dtypes=dtypes, notes="\n".join(notes), substitute=substitute,
                      source=row["source"] + ("; " + row["deprecated"]["source"] if row.get("deprecated") else "")
                      + (f"; {wheel.get('wheel')} (Python files: no definition of {key})" if in_wheel == "" else ""))

    def _product_dtypes(self, dtypes: list[str]) -> tuple[list[str], list[str]]:
        """Split a page's dtype list into those the target product has and those its profile lacks."""
        profile = _table("products.json")["profiles"][self.target.product]["dtypes"]
        lacking = [d for d in dtypes if profile.get(_dtype_family(d), {}).get("supported") is False]
        return [d for d in dtypes if d not in lacking], lacking

    # ---- environment variables ------------------------------------------------------------------
    _TORCH_NPU_PREFIXES = ("TORCH_HCCL_", "TORCH_NPU_", "PYTORCH_NPU_", "PYTORCH_NO_NPU_")

    def _wheel_env(self) -> dict | None:
        return _table("env.json")["wheel_env"].get(self.target.torch_npu)

    def env_var(self, name: str) -> Answer | None:
        env = _table("env.json")
        raw = name.strip()
        var = env["variables"].get(raw)
        wheel = self._wheel_env()
        if var is not None:
            # a product the page's 支持的型号 list leaves out is unverified, not unsupported, unless the page
            # says the variable has no effect there ("该环境变量不生效")
            no_effect = var.get("no_effect", {})
            products = {p: True if p in var["products"] else False if p in no_effect else UNVERIFIED
                        for p in PRODUCTS}
            if _line_key(self.target.torch_npu) < _line_key(FIRST_950_LINE) and products["950"] is not UNVERIFIED:
                products["950"] = UNVERIFIED   # the page carries no version; no list names 950DT this early
            state = products[self.target.product]
            notes = [var.get("meaning_en", ""), var["meaning"]]
            if state is False:
                notes.insert(0, f"no effect on {self.target.product}: its page says so ({no_effect[self.target.product]})")
            for label, value in (("default", var.get("default")), ("unit", var.get("unit")),
                                 ("advice", var.get("advice"))):
                if value:
                    notes.append(f"{label}: {value}")
            if not var["products"]:
                notes.append("its page names no product")
            source, substitute, via = var["source"], None, "Ascend environment variable"
            if state is False:
                via, source = "no effect on this product (its page)", f"{source}; {no_effect[self.target.product]}"
            if wheel and raw in wheel["names"]:
                source += f"; {wheel['wheel']}: {wheel['names'][raw]}"
            elif wheel:
                # the pages carry no version: the line's wheel shows whether this release knows the name.
                # torch_npu's own families are read by torch_npu alone (absent = no); others may be read
                # by CANN, and a stand-in wheel (no wheel of this line on PyPI) settles nothing
                own = raw.startswith(self._TORCH_NPU_PREFIXES) and "no wheel of" not in wheel["wheel"]
                state = False if own else UNVERIFIED
                older = raw.replace("TORCH_HCCL_", "HCCL_", 1) if raw.startswith("TORCH_HCCL_") else None
                via = f"not read by torch_npu {wheel['release']}"
                products = {p: state for p in PRODUCTS}
                notes.insert(0, f"the torch_npu {wheel['release']} wheel does not contain the name {raw}"
                             + ("" if own else " (it may be read by CANN instead, or the wheel is a stand-in)"))
                if older and older in wheel["names"]:
                    substitute = older
                    notes.insert(1, f"this line reads {older} ({wheel['names'][older]})")
                source += f"; {wheel['wheel']} (name absent)"
            return Answer(symbol=raw, kind="env", supported=state, via=via, products=products,
                          notes="\n".join(n for n in notes if n), substitute=substitute, source=source)
        if not re.match(r"^(TORCH_NCCL_|NCCL_|CUDA_|PYTORCH_CUDA_|CUBLAS|CUDNN)", raw):
            if wheel and raw in wheel["names"]:
                return Answer(symbol=raw, kind="env", supported=UNVERIFIED, via="read by torch_npu (no page)",
                              products={p: UNVERIFIED for p in PRODUCTS},
                              notes=f"the torch_npu {wheel['release']} wheel reads {raw}, but no Ascend page "
                                    "documents it", source=f"{wheel['wheel']}: {wheel['names'][raw]}")
            return None
        return self._cuda_counterpart(raw, env, wheel)

    def _cuda_counterpart(self, raw: str, env: dict, wheel: dict | None) -> Answer:
        """A CUDA / NCCL variable: no effect on Ascend; its Ascend spelling where a page or this line's
        wheel knows one, else a generic answer."""
        candidates = []
        if raw.startswith("TORCH_NCCL_"):
            rest = raw[len("TORCH_NCCL_"):]
            candidates = ["TORCH_HCCL_" + rest, "HCCL_" + rest]
        elif raw.startswith("NCCL_"):
            candidates = ["HCCL_" + raw[len("NCCL_"):]]
        elif "CUDA" in raw:
            candidates = [raw.replace("CUDA", "NPU"), raw.replace("CUDA", "ASCEND_RT"), raw.replace("CUDA", "ASCEND")]
        names = wheel["names"] if wheel else {}
        # a spelling this line's wheel reads first (v2.6 reads HCCL_BLOCKING_WAIT, not TORCH_HCCL_BLOCKING_WAIT,
        # although only the latter has a page), then one a page documents
        candidates.sort(key=lambda cand: cand not in names)
        for cand in candidates:
            where = []
            if cand in env["variables"]:
                where.append(env["variables"][cand]["source"])
            if wheel and cand in names:
                where.append(f"{wheel['wheel']}: {names[cand]}")
            if where:
                notes = [f"{raw} has no effect on Ascend; the same setting is {cand} (the Ascend spelling; "
                         "the pages do not pair the two names, so check the meaning and units on its page)"]
                if cand not in names and cand.startswith(self._TORCH_NPU_PREFIXES) and wheel:
                    notes.append(f"but the torch_npu {wheel['release']} wheel does not read {cand}")
                return Answer(symbol=raw, kind="env", supported=False, via="CUDA/NCCL variable (ignored on NPU)",
                              products={p: False for p in PRODUCTS}, notes="\n".join(notes), substitute=cand,
                              source="; ".join(where))
        family = "NCCL" if "NCCL" in raw else "CUDA"
        src = f"{wheel['wheel']} (name absent)" if wheel and raw not in names else ""
        return Answer(symbol=raw, kind="env", supported=False, via=f"{family} variable (ignored on NPU)",
                      products={p: False for p in PRODUCTS},
                      notes=f"{raw} configures {'NCCL' if family == 'NCCL' else 'the CUDA runtime'}, which torch_npu "
                            "does not use; neither the Ascend pages nor this line's torch_npu wheel name an Ascend "
                            "counterpart", source=src)

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
            return Answer(symbol=raw, kind="dtype", supported=UNVERIFIED, via="no product-scoped list",
                          products={p: UNVERIFIED for p in PRODUCTS}, dtypes=[name],
                          notes=f"unverified: no page lists {name} for any product",
                          source=_table("products.json")["source"])
        row = rows[self.target.product]
        examples = f", e.g. {', '.join(row['evidence'][:3])}" if row["evidence"] else ""
        against = f", e.g. {', '.join(row['against'][:2])}" if row["against"] else ""
        if row["supported"] is True:
            notes = f"{row['evidence_count']} dtype lists of pages that name this product list {family}{examples}"
        elif row["supported"] is False:
            # those pages scope dtypes for their own op; none says the product lacks the dtype
            notes = (f"unverified: no page lists {family} for {self.target.product}; {row['against_count']} pages "
                     f"list it for another product and not for this one{against}, but each is about one op, "
                     "and no source states that the product lacks the dtype")
        elif row["evidence"] and row["against"]:
            notes = (f"unverified: the pages disagree: {row['evidence_count']} list {family} for "
                     f"{self.target.product}{examples}; {row['against_count']} list it only for other "
                     f"products{against}")
        else:
            notes = (f"unverified: no page scopes {family} to {self.target.product} (the pages state no "
                     "product-wide dtype facts)")
        products = {p: (UNVERIFIED if r["supported"] is False else r["supported"]) for p, r in rows.items()}
        supported = products[self.target.product]
        own = "pytorch/docs/native_api/pytorch_" + self._torch_version().replace(".", "-") + "/"
        lists = [e for e in row["evidence"] if e.startswith("pytorch/docs/native_api/pytorch_")]
        if supported is True and row["evidence_count"] == len(lists) and not any(e.startswith(own) for e in lists):
            # the yes rests only on support lists for another torch (float64 from the 2.13 torch-Tensor list)
            supported = products[self.target.product] = UNVERIFIED
            notes = (f"unverified: only support lists of another torch list {family} for {self.target.product} "
                     f"({', '.join(lists)}); there is no list for torch {self._torch_version()}, which "
                     f"{self.target.torch_npu} builds on")
        if _line_key(self.target.torch_npu) < _line_key(FIRST_950_LINE):
            # the pages carry no version, and no support list names 950DT before torch 2.7.1 (as for APIs)
            products["950"] = UNVERIFIED
            if self.target.product == "950":
                supported = UNVERIFIED
                notes = (f"unverified: no support list names Ascend 950DT for {self.target.torch_npu} (the first with a "
                         f"950DT column is for torch 2.7.1), and the dtype lists carry no version; {notes}")
        return Answer(symbol=raw, kind="dtype", supported=supported, via=f"product profile {self.target.product}",
                      products=products, dtypes=[name], notes=notes,
                      source="; ".join(dict.fromkeys(row["evidence"][:3] + row["against"][:3])) or row["source"])

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


_ALIASES = (("F.", "torch.nn.functional."), ("nn.functional.", "torch.nn.functional."),
            ("nn.", "torch.nn."), ("dist.", "torch.distributed."))


_ATEN_BOUND = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")


def canonical_api(name: str) -> str:
    """'F.rms_norm', 'nn.functional.rms_norm' -> 'torch.nn.functional.rms_norm'; 'nn.Linear' -> 'torch.nn.Linear'."""
    for short, full in _ALIASES:
        if name.startswith(short):
            return full + name[len(short):]
    return name


def _module_to_aten(qualname: str) -> str | None:
    """torch.nn.Linear -> linear, torch.nn.LayerNorm -> layer_norm, torch.nn.Conv2d -> conv2d."""
    if not qualname.startswith("torch.nn.") or qualname.count(".") != 2:
        return None
    cls = qualname.rsplit(".", 1)[1]
    if not cls[:1].isupper():
        return None
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", cls).lower()


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
    s = canonical_api(symbol.strip())
    if not s:
        return unknown(symbol)
    if s.startswith(("aten::", "aten.", "torch.ops.aten.")):
        return cov.aten(s)
    if s.startswith(("torch_npu.", "torch.ops.npu.", "npu::")):
        return cov.custom_op(s) or cov.api(s) or unknown(s, "torch_npu API")
    if _REDUCE_OP.match(s) and not _ENV_NAME.match(s) or s.startswith(("torch.distributed.ReduceOp.", "dist.ReduceOp.", "ReduceOp.")):
        return cov.collective(s)
    if s.startswith(_COLLECTIVE_PREFIXES):
        answer = cov.collective(s)
        if answer.kind != "unknown":
            return answer
        return cov.api(s) or cov.custom_op(s) or unknown(s, "Python API")
    if s.startswith("torch."):
        api_answer = cov.api(s) or cov.custom_op(s)   # torch.npu.* APIs documented on custom_APIs pages
        if api_answer is not None:
            return api_answer
        aten_name = _api_to_aten(s)
        if aten_name:
            via_aten = cov.aten(aten_name)
            if via_aten.kind != "unknown":
                absent = via_aten.via == "absent" and s.startswith(_ATEN_BOUND)
                supported = via_aten.supported if absent else (
                    UNVERIFIED if via_aten.supported is True or via_aten.via == "absent" else via_aten.supported)
                return Answer(symbol=s, kind="api", supported=supported, via=via_aten.via,
                              products={p: supported for p in via_aten.products} if via_aten.via == "absent" else
                              {p: (UNVERIFIED if v is True else v) for p, v in via_aten.products.items()},
                              dtypes=[], notes=(
                                  f"not in the torch {cov.api_doc} support list; answered from "
                                  f"aten::{normalize_aten(aten_name)} ({via_aten.notes})"
                                  + ("; a kernel for the aten op does not verify the Python API" if via_aten.supported
                                     is True else "")),
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


def unsupported_api_details(target: Target) -> dict[str, dict]:
    """torch.* APIs the tables mark unsupported on the target (NPU501), or that only another torch's list marks
    unsupported (unverified, NPU502), with the message and substitution the static pass reports for each and the
    `coverage` matcher value of the rule that reports it (used by `audit check` and `audit fix`)."""
    cov = Coverage.load(target)
    details = {
        name: {"message": f"`{name}` is not supported on {target.describe()}"
                          + (f": {ans.notes}" if ans.notes else "") + f" (source: {ans.source})",
               "substitution": ans.substitute, "coverage": "api"}
        for name, ans in cov.unsupported_apis().items()}
    for name, ans in cov.unverified_unsupported_apis().items():
        details.setdefault(name, {
            "message": f"`{name}` may not be supported on {target.describe()}: {ans.notes.splitlines()[1]}; "
                       f"{ans.notes.splitlines()[0].removeprefix('unverified: ')} (source: {ans.source})",
            "substitution": ans.substitute, "coverage": "api_unverified"})
    return details
