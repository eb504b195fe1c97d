"""The smaller tables: torch_npu custom ops, HCCL, environment variables, fusion patterns and
product profiles."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from auditor.coverage import build_docs
from auditor.coverage.products import NATIVE_API_COLUMNS, normalize_dtype, products_in_term
from auditor.target import PRODUCT_TITLES, PRODUCTS

FUSION_YAML = "msprof-analyze/rules/timeline_fusion_ops.yaml"
ENV_INFO_YAML = "msprof-analyze/rules/environment_variable_info.yaml"
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
    title: str | None = None
    start = 0
    body: list[str] = []
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
        if "不支持" in line:   # '数据类型不支持bfloat16' names a dtype it does not support
            continue
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
    products: dict[str, bool] = {}
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
        "scoped_dtypes": {p: d for p, d in sorted(scoped.items()) if p in products},
        "layouts": layouts,
        "signature": signature,
        "constraints": _clean("\n".join(l.rstrip() for l in constraints)),
        "beta": "beta" in lines[0],
        "source": f"{rel}:1 (# {title})",
    }


def _not_in_wheel(short: str, covered: list[str], wheels: list[dict]) -> dict[str, str]:
    """The lines op-plugin covers whose own released wheel does not register the op: op-plugin's ranges describe
    branch heads, the line's released wheel decides (its own release only: a stand-in wheel of another line
    proves nothing for v2.2 / v2.15)."""
    return {line: wheel["wheel"] for line in covered
            for wheel in [next((w for w in reversed(wheels) if w["line"] == line), None)]
            if wheel is not None and not any(c.split(".")[0] == short for c in wheel["custom_ops"])}


def build_custom_ops(ascend_dir: Path, lines: list[str], custom_npu: dict[str, dict],
                     deprecated: dict[str, dict], wheels: list[dict]) -> dict:
    ops: dict[str, dict] = {}
    root = ascend_dir / build_docs.CUSTOM_API_DIR
    for page in sorted(root.rglob("*.md")):
        rel = page.relative_to(ascend_dir).as_posix()
        entry = parse_custom_page(page, rel)
        if entry is None or entry["name"] in ops:
            continue
        short = entry["name"].rsplit(".", 1)[-1]
        overloads = sorted(k for k in custom_npu if k.split(".")[0] == short) \
            if entry["name"].startswith("torch_npu.npu") or entry["name"].startswith("torch_npu." + short) else []
        if overloads:
            covered = sorted({l for k in overloads for ls in custom_npu[k]["kernels"].values() for l in ls},
                             key=lines.index)
            entry["lines"] = covered
            entry["source"] += "; " + custom_npu[overloads[0]]["source"]
            entry["not_in_wheel"] = _not_in_wheel(short, covered, wheels)
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
        ops[name] = {"name": name, "products": {}, "dtypes": {}, "scoped_dtypes": {}, "layouts": [], "signature": "",
                     "constraints": "", "beta": False, "lines": covered, "source": row["source"],
                     "not_in_wheel": _not_in_wheel(key.split(".")[0], covered, wheels),
                     **({"deprecated": deprecated[key]} if key in deprecated else {})}
    return {"schema": 1, "count": len(ops), "ops": ops}


REDUCE_OPS = ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM")


def reduce_op_row(op: str, line: str, source_facts: dict, npu_strings: dict[str, dict]) -> dict:
    """What one ReduceOp member does on HCCL in one torch_npu line: the line's branch of torch_npu's source
    states it (getHcclReduceOp, op_tables/source_facts.py); the line's own released wheel must not
    contradict it (the wheel's `Cannot use ReduceOp.` message for the members that raise, its PREMUL_SUM
    handling).  Statuses: yes (native or emulated), no (raises), unverified."""
    row = source_facts.get("by_line", {}).get(line)
    if row is None:
        return {"status": "unverified", "how": "", "note": "no torch_npu source of this line was read", "source": ""}
    fact = row["reduce_ops"][op]
    src = (f"{source_facts['repo']} {row['branch']} ({row['commit'][:10]}): {source_facts['file']}:{fact['line']}"
           " (getHcclReduceOp)")
    data = npu_strings.get(line)
    own = data is not None and not data.get("stand_in_for")
    wheel_note = "" if own else f"; no torch_npu wheel of {line} on PyPI: the branch alone speaks for the line"
    say = {"native": ("yes", "native", "mapped to a native HCCL reduction (hcclOp)"),
           "emulated": ("yes", "emulated", "emulated: torch_npu runs a SUM on HCCL and scales around it"),
           "raises": ("no", "raises", f"raises `Cannot use ReduceOp.{op} with HCCL` (unsupportedOp)"),
           "unhandled": ("no", "raises", "not handled: raises `Unhandled ReduceOp`")}[fact["status"]]
    status, how, note = say
    note = f"{note}, per the {row['branch']} branch of torch_npu's source{wheel_note}"
    if own and data is not None:
        wheel = data["wheel"]
        premul = data["facts"].get("premul_sum")
        if op == "PREMUL_SUM" and status == "yes" and not premul:
            return {"status": "unverified", "how": "", "source": f"{src}; {wheel}", "note": (
                f"the {row['branch']} branch head emulates PREMUL_SUM, but the torch_npu {data['release']} wheel "
                "(the line's newest release) shows no PREMUL_SUM handling (no _make_hccl_premul_sum): the release "
                "may predate it")}
        if op == "PREMUL_SUM" and status == "no" and premul:
            return {"status": "unverified", "how": "", "source": f"{src}; {wheel}", "note": (
                f"the {row['branch']} branch does not handle PREMUL_SUM, but the torch_npu {data['release']} wheel "
                f"has `{premul['text']}`")}
        if how == "raises" and not data["facts"].get("reduce_op_error") and fact["status"] == "raises":
            return {"status": "unverified", "how": "", "source": f"{src}; {wheel}", "note": (
                f"the {row['branch']} branch raises for {op}, but the torch_npu {data['release']} wheel lacks the "
                "`Cannot use ReduceOp.` message")}
        src += f"; {wheel}: torch_npu/lib/libtorch_npu.so"
    return {"status": status, "how": how, "note": note, "source": src}


def build_hccl(ascend_dir: Path, doc_sets: list[tuple[str, dict]], lines: list[str],
               npu_strings: dict[str, dict], source_facts: dict) -> dict:
    """Collectives with their dtypes and world-size limits per support list, and what each ReduceOp member
    does per torch_npu line (the support list marks the ReduceOp class, never its members: the members come
    from torch_npu's source, checked against the line's wheel, see reduce_op_row)."""
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
    reduce_ops = {op: {"by_line": {line: reduce_op_row(op, line, source_facts, npu_strings) for line in lines}}
                  for op in REDUCE_OPS}
    facts = {}
    recv = {line: row["recv_anysource"] for line, row in source_facts.get("by_line", {}).items()}
    if recv and all(r["raises"] for r in recv.values()):
        newest = source_facts["by_line"][lines[-1]]
        facts["no_any_source_recv"] = {
            "text": "no receive from any source (ProcessGroupHCCL::recvAnysource raises `ProcessGroupHCCL does not "
                    f"support recv` on every line {lines[0]}-{lines[-1]})",
            "source": f"{source_facts['repo']} {newest['branch']} ({newest['commit'][:10]}): {source_facts['file']}:"
                      f"{recv[lines[-1]]['line']} (ProcessGroupHCCL::recvAnysource)"}
    return {"schema": 2, "count": len(collectives), "collectives": collectives, "reduce_ops": reduce_ops,
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
    # "针对<term>A</term>/<term>B</term>，...该环境变量不生效。": the page says the variable has no effect there
    no_effect = [(i + 1, p) for i, l in enumerate(lines) if l.strip().startswith("针对") and "该环境变量不生效" in l
                 for t in re.findall(r"<term>([^<]*)</term>", l.split("，")[0]) for p in products_in_term(t)]
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
        "no_effect": {p: f"{rel}:{n}" for n, p in sorted(no_effect) if p not in products},
        "source": f"{rel}:1 (# {name})",
    }


def build_env(ascend_dir: Path, npu_strings: dict[str, dict]) -> dict:
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

    # CUDA / NCCL counterparts: the pages name none.  What each line's torch_npu wheel reads (its Python
    # files and libtorch_npu.so) is recorded per line; auditor.coverage pairs a CUDA/NCCL name with the
    # Ascend spelling that the pages or that wheel know.
    wheel_env = {line: {"release": data["release"], "names": data["env"],
                        "wheel": data["wheel"] + (f" (no wheel of {line} on PyPI; nearest older release)"
                                                  if data.get("stand_in_for") else ""),
                        "stand_in": bool(data.get("stand_in_for")),
                        # documented torch_npu Python APIs: the wheel file defining each, "" = not defined
                        "python_apis": data.get("python_apis", {})}
                 for line, data in sorted(npu_strings.items())}
    return {"schema": 2, "count": len(variables), "variables": variables, "wheel_env": wheel_env}


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
    """Profiles: the support-list column, and bf16 / fp8 / fp64 from product-scoped page evidence only
    (no page states a product-wide dtype fact).  For each page entry that scopes dtype lists by product:
    'for' = the product's list names the dtype; 'against' = another product's list in the same entry
    names it and this product's list does not.  Only 'for': yes; only 'against': no; both or neither:
    unverified (the notes say which pages disagree)."""
    kinds = ("bfloat16", "float8", "float64")
    pro: dict[str, dict[str, list[str]]] = {d: {p: [] for p in PRODUCTS} for d in kinds}
    con: dict[str, dict[str, list[str]]] = {d: {p: [] for p in PRODUCTS} for d in kinds}
    # every other dtype: yes only where a page that marks the product supported lists it (scoped or
    # not); never no (an unscoped list is too loose to read a product's absence from); else unverified
    named: dict[str, dict[str, list[str]]] = {}

    def name_all(per_product: dict[str, list[str]], source: str) -> None:
        for p, ds in per_product.items():
            for d in {family(x) for x in ds} - set(kinds):
                named.setdefault(d, {q: [] for q in PRODUCTS})[p].append(source)

    def family(d: str) -> str:
        return "float8" if d.startswith("float8") or d == "hifloat8" else d

    def weigh(scoped: dict[str, list[str]], source: str) -> None:
        fams = {p: {family(d) for d in ds} for p, ds in scoped.items()}
        for d in kinds:
            for p, have in fams.items():
                if d in have:
                    pro[d][p].append(source)
                elif any(d in other for q, other in fams.items() if q != p):
                    con[d][p].append(source)

    for name, op in sorted(custom_ops["ops"].items()):
        if op.get("scoped_dtypes"):
            weigh(op["scoped_dtypes"], op["source"].split(";")[0])
        name_all({p: op["dtypes"].get(p, []) for p, ok in op["products"].items() if ok is True},
                 op["source"].split(";")[0])
    version, apis = api_sets[-1]
    for name, entry in sorted(apis.items()):
        scoped: dict[str, list[str]] = {}
        for r in entry["restrictions"]:
            for p in r["products"] or []:
                scoped.setdefault(p, [])
                scoped[p] += r["dtypes"]
        if scoped:
            weigh(scoped, entry["source"])
        general = [d for r in entry["restrictions"] if not r["products"] for d in r["dtypes"]]
        name_all({p: scoped.get(p, []) + general for p, ok in entry["products"].items() if ok is True},
                 entry["source"])
    profiles = {}
    for p in PRODUCTS:
        dt = {}
        for d in kinds:
            yes, no = sorted(set(pro[d][p])), sorted(set(con[d][p]))
            status = True if yes and not no else False if no and not yes else "unverified"
            dt[d] = {"supported": status, "evidence_count": len(yes), "evidence": yes[:5],
                     "against_count": len(no), "against": no[:5],
                     "source": (yes or no or ["no product-scoped dtype list names this product"])[0]}
        for d, sources in sorted(named.items()):
            yes = sorted(set(sources[p]))
            dt[d] = {"supported": True if yes else "unverified", "evidence_count": len(yes), "evidence": yes[:5],
                     "against_count": 0, "against": [],
                     "source": (yes or ["no page that names this product lists it"])[0]}
        profiles[p] = {"title": PRODUCT_TITLES[p], "native_api_column": NATIVE_API_COLUMNS[p]
                       if p in ("a2", "a3", "950") else None,
                       "doc_term": NATIVE_API_COLUMNS[p], "dtypes": dt}
    return {"schema": 2, "count": len(profiles), "profiles": profiles,
            "source": f"product-scoped dtype lists of op-plugin/docs/custom_APIs pages and the torch {version} "
                      "native_api restrictions"}


def build_all(ascend_dir: Path, lines: list[str], custom_npu: dict[str, dict], deprecated: dict[str, dict],
              api_sets: list[tuple[str, dict]], npu_strings: dict[str, dict], wheels: list[dict],
              source_facts: dict) -> dict[str, dict]:
    custom = build_custom_ops(ascend_dir, lines, custom_npu, deprecated, wheels)
    return {
        "custom_ops": custom,
        "hccl": build_hccl(ascend_dir, api_sets, lines, npu_strings, source_facts),
        "env": build_env(ascend_dir, npu_strings),
        "fusion": build_fusion(ascend_dir),
        "products": build_products(ascend_dir, custom, api_sets),
        "private_apis": build_private_apis(ascend_dir),
    }


PRIVATE_APIS_MD = "pytorch/docs/native_api/private_apis.md"


def build_private_apis(ascend_dir: Path) -> dict:
    """pytorch/docs/native_api/private_apis.md: one table row per private API, '是' (supported) with an
    optional '暂不支持<term>product</term>', dtype text and a 'only PyTorch X and later' bound."""
    path = ascend_dir / PRIVATE_APIS_MD
    apis: dict[str, dict] = {}
    if not path.is_file():
        return {"schema": 1, "count": 0, "apis": apis, "source": None}
    section = ""
    header: list[str] = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if not line.startswith("|") or line.startswith("|--"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "API名称":
            header = cells
            continue
        if not header or len(cells) != len(header):
            continue
        row = dict(zip(header, cells))
        name = row["API名称"].replace("\\_", "_").strip()
        support = row.get("是否支持", "")
        notes = row.get("限制与说明", "").replace("<br>", "\n").replace("\\_", "_")
        excluded = sorted({p for t in re.findall(r"暂不支持<term>([^<]*)</term>", support) for p in products_in_term(t)})
        since = re.search(r"仅支持PyTorch\s*([0-9.]+)以上版本", notes)
        apis[name] = {"supported": support.startswith("是"), "not_on": excluded,
                      "npu_name": row.get("NPU形式名称") or None,
                      "dtypes": _dtypes_in_words(notes), "min_torch": since.group(1) if since else None,
                      "raw": re.sub(r"</?term>", "", notes), "source": f"{PRIVATE_APIS_MD}:{i} (§ {section})"}
    return {"schema": 1, "count": len(apis), "apis": apis, "source": PRIVATE_APIS_MD}


def _dtypes_in_words(text: str) -> list[str]:
    m = re.search(r"支持([a-z0-9，,、\s]+)", text)
    return build_docs.parse_dtypes(m.group(1)) if m else []
