"""The smaller tables: torch_npu custom ops, HCCL, environment variables, fusion patterns and
product profiles."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from auditor.coverage import build_docs
from auditor.coverage.products import NATIVE_API_COLUMNS, normalize_dtype, products_in_term
from auditor.target import PRODUCT_TITLES, PRODUCTS, normalize_product

FUSION_YAML = "msprof-analyze/rules/timeline_fusion_ops.yaml"
ENV_INFO_YAML = "msprof-analyze/rules/environment_variable_info.yaml"
DESIGN_MD = "../DESIGN.md"  # relative to the ascend folder: /work/shared/DESIGN.md
_DTYPE_WORD = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(
    ["bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
     "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "hifloat8", "int4",
     "float4_e2m1", "float4_e1m2", "BFLOAT16", "FLOAT16", "FLOAT", "FLOAT32", "INT8", "INT32", "INT64",
     "BOOL", "UINT8", "INT16"], key=len, reverse=True)) + r")(?![A-Za-z0-9_])")
_LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND", "NTD", "BNSD_BSND", "BSH_BNSD", "BSND_BNSD", "NTD_TND")


def _clean(text: str) -> str:
    text = re.sub(r"<a name=[^>]*></a>", "", text)
    return text.replace("\\_", "_").replace("\\*", "*").strip()


def _sections(lines: list[str]) -> dict[str, tuple[int, list[str]]]:
    """'## title' -> (line number, body lines) for one page."""
    out: dict[str, tuple[int, list[str]]] = {}
    title, start, body = None, 0, []
    for i, line in enumerate(lines, start=1):
        m = re.match(r"^##\s+(.*)$", line)
        if m:
            if title is not None:
                out.setdefault(title, (start, body))
            title, start, body = _clean(m.group(1)), i, []
        elif title is not None:
            body.append(line)
    if title is not None:
        out.setdefault(title, (start, body))
    return out


# "double" is left out of _DTYPE_WORD: on these pages it names the Python type of float arguments.


def _dtypes_in(text: str) -> list[str]:
    found = []
    for word in _DTYPE_WORD.findall(text):
        dtype = normalize_dtype(word)
        if dtype and dtype not in found:
            found.append(dtype)
    return sorted(found)


def _scoped_dtypes(lines: list[str]) -> dict[str | None, list[str]]:
    """Dtypes per product scope: a bullet '- <term>A</term>、<term>B</term>：' scopes itself and the
    more-indented lines below it to those products; everything else is scope None (all products)."""
    scopes: dict[str | None, set[str]] = {}
    active: tuple[int, list[str]] | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = re.match(r"^\s*(?:-\s*)?((?:<term>[^<]*</term>[、/和\s]*)+)[：:]", line)
        if m:
            titles = re.findall(r"<term>([^<]*)</term>", m.group(1))
            active = (indent, sorted({p for t in titles for p in products_in_term(t)}))
        elif active and indent <= active[0]:
            active = None
        for dtype in _dtypes_in(line):
            for product in (active[1] if active else [None]):
                scopes.setdefault(product, set()).add(dtype)
    return {k: sorted(v) for k, v in scopes.items()}


def parse_custom_page(path: Path, rel: str) -> dict | None:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("# "):
        return None
    title = re.sub(r"^（beta）|^\(beta\)", "", _clean(lines[0][2:])).strip()
    name = re.sub(r"^class\s+", "", title).strip()
    if not re.fullmatch(r"torch(_npu)?(\.[A-Za-z_][A-Za-z0-9_]*)+", name):
        return None
    sections = _sections(lines)
    if "产品支持情况" not in sections:
        return None
    products = {}
    for row in sections["产品支持情况"][1]:
        m = re.match(r"^\|\s*<term>\s*([^<]*?)\s*</term>\s*\|\s*([√×✔✘xX])\s*\|", row.strip())
        if m:
            for product in products_in_term(m.group(1)):
                products[product] = products.get(product, False) or m.group(2) in "√✔"
    params = sections.get("参数说明", (0, []))[1]
    constraints = sections.get("约束说明", (0, []))[1]
    scoped = _scoped_dtypes(params + constraints)
    common = scoped.pop(None, [])
    dtypes = {p: sorted(set(common) | set(scoped.get(p, []))) for p in products if products[p]}
    layout_text = " ".join(l for l in params if "layout" in l)
    layouts = sorted({w for w in re.findall(r"[A-Z][A-Z_]+", layout_text) if w in _LAYOUTS})
    proto = sections.get("函数原型", (0, []))[1]
    signature = next((l.strip() for l in proto if l.strip() and not l.strip().startswith("```")), "")
    return {
        "name": name,
        "products": dict(sorted(products.items())),
        "dtypes": dtypes,
        "layouts": layouts,
        "signature": signature,
        "constraints": _clean("\n".join(l.rstrip() for l in constraints)),
        "beta": "beta" in lines[0],
        "source": f"{rel}:1 (# {title})",
    }


def build_custom_ops(ascend_dir: Path, lines: list[str], custom_npu: dict[str, dict],
                     deprecated: dict[str, dict]) -> dict:
    ops: dict[str, dict] = {}
    root = ascend_dir / build_docs.CUSTOM_API_DIR
    for page in sorted(root.rglob("*.md")):
        rel = page.relative_to(ascend_dir).as_posix()
        entry = parse_custom_page(page, rel)
        if entry is None or entry["name"] in ops:
            continue
        short = entry["name"].rsplit(".", 1)[-1]
        overloads = sorted(k for k in custom_npu if k.split(".")[0] == short) if entry["name"].startswith("torch_npu.npu") or entry["name"].startswith("torch_npu." + short) else []
        if overloads:
            covered = sorted({l for k in overloads for ls in custom_npu[k]["kernels"].values() for l in ls},
                             key=lines.index)
            entry["lines"] = covered
            entry["source"] += "; " + custom_npu[overloads[0]]["source"]
        else:
            entry["lines"] = None  # a Python-level API (optimizer, contrib module): no op-plugin version range
        if short in deprecated:
            entry["deprecated"] = deprecated[short]
        ops[entry["name"]] = entry
    # op-plugin custom ops without a page: known to exist on their lines, products undocumented
    for key, row in sorted(custom_npu.items()):
        name = "torch_npu." + key.split(".")[0]
        if name in ops or key.split(".")[0].endswith("_backward"):
            continue
        covered = sorted({l for ls in row["kernels"].values() for l in ls}, key=lines.index)
        ops[name] = {"name": name, "products": {}, "dtypes": {}, "layouts": [], "signature": "",
                     "constraints": "", "beta": False, "lines": covered, "source": row["source"],
                     **({"deprecated": deprecated[key]} if key in deprecated else {})}
    return {"schema": 1, "count": len(ops), "ops": ops}


def _design_bullet(ascend_dir: Path, label: str) -> tuple[str, int]:
    path = ascend_dir / DESIGN_MD
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"- {label}:"):
            body = [line]
            for nxt in lines[i + 1:]:
                if nxt.startswith("  ") and not nxt.startswith("- "):
                    body.append(nxt.strip())
            # a wrapped line ending in '/' continues a word ('all_reduce/reduce/' + 'reduce_scatter')
                else:
                    break
            joined = body[0]
            for part in body[1:]:
                joined += part if joined.endswith("/") else " " + part
            return joined[len(f"- {label}:"):].strip(), i + 1
    raise ValueError(f"{path}: no '- {label}:' bullet in §4")


def _expect(pattern: str, text: str, what: str) -> re.Match:
    m = re.search(pattern, text)
    if not m:
        raise ValueError(f"DESIGN.md no longer states {what} (pattern {pattern!r}); update build_extra.py")
    return m


def _dtype_list(text: str) -> list[str]:
    """'int8/16/32/64, fp16, fp32, bf16' or 'fp64 and uint64 only on Ascend 950' -> torch dtype names."""
    out = set()
    for word in re.findall(r"[a-z]+\d+(?:/\d+)*", text):
        m = re.fullmatch(r"([a-z]+)(\d+(?:/\d+)+)", word)
        for w in ([m.group(1) + b for b in m.group(2).split("/")] if m else [word]):
            if normalize_dtype(w):
                out.add(normalize_dtype(w))
    return sorted(out)


def build_hccl(ascend_dir: Path, doc_sets: list[tuple[str, dict]]) -> dict:
    """Collectives with their dtypes and world-size limits per support list, plus the reduce-op and
    process facts that only DESIGN.md §4 states (the snapshots do not document them)."""
    text, lineno = _design_bullet(ascend_dir, "HCCL")
    design_src = f"DESIGN.md:{lineno} (§4 HCCL; not stated in the shared Ascend snapshots)"
    raising = _expect(r"ReduceOp ([A-Z_/]+) raise", text, "the ReduceOps that raise").group(1).split("/")
    emulated = _expect(r"([A-Z_]+) and ([A-Z_]+) are emulated", text, "the emulated ReduceOps").groups()
    gather = _expect(r"`gather` is unsupported \(([^)]*)\)", text, "the gather fallback").group(1)
    dtypes_m = _expect(r"all_reduce/reduce/\s*reduce_scatter\s+dtypes\s+([^(]*)\(([^)]*)\)", text, "collective dtypes")
    reduce_ops = {}
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM"):
        if op in raising:
            reduce_ops[op] = {"supported": False, "via": "raises", "source": design_src}
        elif op in emulated:
            reduce_ops[op] = {"supported": "partial", "via": "emulated", "source": design_src}
        else:
            reduce_ops[op] = {"supported": True, "via": "hccl",
                              "source": design_src.replace("§4 HCCL", "§4 HCCL: not among the ops that raise or are emulated")}
    collectives: dict[str, dict] = {}
    for version, apis in doc_sets:
        for name, entry in apis.items():
            if not name.startswith("torch.distributed.") or name.count(".") != 2:
                continue
            short = name.rsplit(".", 1)[1]
            limits = re.findall(r"`world_size`不支持([0-9，,、\s]+)", entry["raw"])
            row = collectives.setdefault(short, {"by_torch": {}})
            row["by_torch"][version] = {
                "products": entry["products"],
                "dtypes": entry["restrictions"][0]["dtypes"] if entry["restrictions"] else [],
                "world_size_unsupported": sorted({int(x) for s in limits for x in re.findall(r"\d+", s)}),
                "compatible_impl": "use_compatible_impl" in entry["raw"],
                "raw": entry["raw"],
                "source": entry["source"],
            }
    collectives.setdefault("gather", {"by_torch": {}})["design_note"] = {
        "text": f"gather is unsupported by HCCL ({gather})", "source": design_src}
    facts = {
        "reduce_dtypes": {"dtypes": _dtype_list(dtypes_m.group(1)), "only_on_950": _dtype_list(dtypes_m.group(2)),
                          "text": dtypes_m.group(0).strip(), "source": design_src},
    }
    for key, phrase in (("no_any_source_recv", "no receive-from-any-source"),
                        ("one_device_per_process", "one device per process")):
        if phrase in text:
            facts[key] = {"text": phrase, "source": design_src}
    return {"schema": 1, "count": len(collectives), "collectives": collectives, "reduce_ops": reduce_ops,
            "facts": facts}


def parse_env_page(path: Path, rel: str) -> dict | None:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("# "):
        return None
    name = _clean(lines[0][2:])
    name = re.sub(r"^（beta）", "", name).strip()
    if not re.fullmatch(r"[A-Z][A-Z0-9_]+", name):
        return None
    sections = _sections(lines)
    desc_lines = [l.strip() for l in sections.get("功能描述", (0, []))[1] if l.strip()]
    products = sorted({p for l in sections.get("支持的型号", (0, []))[1]
                       for t in re.findall(r"<term>([^<]*)</term>", l) for p in products_in_term(t)})
    text = "\n".join(desc_lines)
    default = re.search(r"默认(?:配置|值)?(?:为|是)\s*([^。，,；]+)", text)
    unit = re.search(r"单位为\s*([A-Za-z]+)", text)
    return {
        "name": name,
        "meaning": _clean(desc_lines[0]) if desc_lines else "",
        "description": _clean(text),
        "default": _clean(default.group(1)).strip("“”\"") if default else None,
        "unit": unit.group(1) if unit else None,
        "products": products,
        "source": f"{rel}:1 (# {name})",
    }


def build_env(ascend_dir: Path) -> dict:
    variables: dict[str, dict] = {}
    for page in sorted((ascend_dir / build_docs.ENV_DIR).rglob("*.md")):
        entry = parse_env_page(page, page.relative_to(ascend_dir).as_posix())
        if entry:
            entry["category"] = page.parent.name
            variables[entry["name"]] = entry
    info = yaml.safe_load((ascend_dir / ENV_INFO_YAML).read_text(encoding="utf-8")) or {}
    for name, item in sorted(info.items()):
        row = variables.setdefault(name, {"name": name, "meaning": "", "description": "", "default": None,
                                          "unit": None, "products": [], "category": "msprof-analyze",
                                          "source": ""})
        row["advice"] = " ".join(str(item.get("suggest", "")).split())
        row["meaning_en"] = " ".join(str(item.get("desc", "")).split())
        row["source"] = "; ".join(s for s in (row["source"], f"{ENV_INFO_YAML} ({name})") if s)

    # CUDA / NCCL counterparts: the pages state none, DESIGN.md §4 lists them; parsed, not retyped.
    text, lineno = _design_bullet(ascend_dir, "Env vars")
    src = f"DESIGN.md:{lineno} (§4 Env vars; the Ascend pages state no CUDA/NCCL counterpart)"
    counterparts: dict[str, dict] = {}
    for clause in text.split(";"):
        clause = clause.strip().rstrip(".")
        m = re.match(r"^(\S+?)(?: \(([^)]*)\))? -> (.+)$", clause)
        if not m:
            continue
        cuda, cuda_unit, rhs = m.groups()
        unit_m = re.search(r"\(([^)]*)\)", rhs)
        targets = [t.strip() for t in re.sub(r"\([^)]*\)", "", rhs).split("/") if t.strip()]
        brace = re.match(r"^(.*)\{([^}]*)\}(.*)$", cuda)
        names = [brace.group(1) + x + brace.group(3) for x in brace.group(2).split(",")] if brace else [cuda]
        for n in names:
            suffix = n[len(brace.group(1)):] if brace else ""
            ascend = [t.replace("*", suffix) if brace and t.endswith("*") else t for t in targets]
            counterparts[n] = {"ascend": ascend, "cuda_unit": cuda_unit,
                               "ascend_unit": unit_m.group(1) if unit_m else None, "source": src}
    no_twin = re.search(r"([A-Z_ /]+) have no NCCL twin", text)
    if no_twin:
        for n in re.findall(r"[A-Z][A-Z_]+", no_twin.group(1)):
            variables.setdefault(n, {"name": n, "meaning": "", "description": "", "default": None, "unit": None,
                                     "products": [], "category": "collective_communication", "source": src})
            variables[n]["cuda_counterpart"] = None
            variables[n].setdefault("notes", "no NCCL counterpart")
    for cuda, row in counterparts.items():
        for ascend in row["ascend"]:
            if ascend in variables:
                variables[ascend].setdefault("cuda_counterparts", []).append(cuda)
    return {"schema": 1, "count": len(variables) + len(counterparts), "variables": variables,
            "cuda_counterparts": counterparts}


def build_fusion(ascend_dir: Path) -> dict:
    path = ascend_dir / FUSION_YAML
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text) or []
    starts = [i + 1 for i, l in enumerate(text.splitlines()) if l.startswith("- cann_version:")]
    patterns = []
    for entry, lineno in zip(doc, starts):
        for family, actions in (entry.get("operator_rules") or {}).items():
            for action, rules in (actions or {}).items():
                for api, seqs in (rules or {}).items():
                    for seq in seqs:
                        patterns.append({
                            "fused_api": api, "pattern": seq, "family": family, "action": action,
                            "ops": [re.sub(r"[(){}0-9,]", "", p) for p in seq.split("-")],
                            "cann_version": str(entry.get("cann_version")),
                            "torch_version": [str(v) for v in entry["torch_version"]]
                            if isinstance(entry.get("torch_version"), list) else str(entry.get("torch_version")),
                            "source": f"{FUSION_YAML}:{lineno} (unique_id {entry.get('unique_id')}, {family}.{action}.{api})",
                        })
    return {"schema": 1, "count": len(patterns), "patterns": patterns}


def build_products(ascend_dir: Path, custom_ops: dict, api_sets: list[tuple[str, dict]]) -> dict:
    """Profiles: the support-list column, and bf16 / fp8 / fp64 with their evidence."""
    text, lineno = _design_bullet(ascend_dir, "Products")
    src = f"DESIGN.md:{lineno} (§4 Products)"
    no_bf16 = _expect(r"\((\w+)\) and (\w+) have no bf16", text, "the products without bf16").groups()
    has_bf16 = _expect(r"(\w+) \(\w+\) and (\w+) \(\w+\) have bf16", text, "the products with bf16").groups()
    fp8 = normalize_product(_expect(r"fp8 needs Ascend (\w+)", text, "the fp8 product").group(1))
    design = {"bfloat16": {**{normalize_product(p): False for p in no_bf16},
                           **{normalize_product(p): True for p in has_bf16}},
              "float8": {p: p == fp8 for p in PRODUCTS}}

    evidence: dict[str, dict[str, list[str]]] = {d: {p: [] for p in PRODUCTS} for d in ("bfloat16", "float8", "float64")}
    for name, op in sorted(custom_ops["ops"].items()):
        for product, dtypes in op["dtypes"].items():
            for d in dtypes:
                key = "float8" if d.startswith("float8") or d == "hifloat8" else d
                if key in evidence and name not in evidence[key][product]:
                    evidence[key][product].append(name)
    version, apis = api_sets[-1]
    for name, entry in sorted(apis.items()):
        for r in entry["restrictions"]:
            for product in (r["products"] or [p for p, ok in entry["products"].items() if ok]):
                for d in r["dtypes"]:
                    if d in ("bfloat16", "float64") and name not in evidence[d][product]:
                        evidence[d][product].append(name)

    profiles = {}
    for p in PRODUCTS:
        dt = {}
        for d in ("bfloat16", "float8", "float64"):
            ev = evidence[d][p]
            if d in design and p in design[d]:
                supported, source = design[d][p], src
            else:
                supported = bool(ev)
                source = "derived from the dtype lists of custom_APIs pages and native_api restrictions"
            dt[d] = {"supported": supported, "source": source, "evidence_count": len(ev),
                     "evidence": ev[:5], "agrees_with_pages": supported == bool(ev)}
        profiles[p] = {"title": PRODUCT_TITLES[p], "native_api_column": NATIVE_API_COLUMNS[p]
                       if p in ("a2", "a3", "950") else None,
                       "doc_term": NATIVE_API_COLUMNS[p], "dtypes": dt}
    return {"schema": 1, "count": len(profiles), "profiles": profiles,
            "source": f"{src}; evidence from torch {version} native_api restrictions and custom_APIs pages"}


def build_all(ascend_dir: Path, lines: list[str], custom_npu: dict[str, dict], deprecated: dict[str, dict],
              api_sets: list[tuple[str, dict]]) -> dict[str, dict]:
    custom = build_custom_ops(ascend_dir, lines, custom_npu, deprecated)
    return {
        "custom_ops": custom,
        "hccl": build_hccl(ascend_dir, api_sets),
        "env": build_env(ascend_dir),
        "fusion": build_fusion(ascend_dir),
        "products": build_products(ascend_dir, custom, api_sets),
    }
