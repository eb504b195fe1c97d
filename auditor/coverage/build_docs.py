"""Parsers for the Ascend Markdown pages: the native_api support lists (Python API support per
product, dtype restrictions), the custom_APIs pages (torch_npu ops) and the environment_variable pages."""
from __future__ import annotations

import re
from pathlib import Path

from auditor.coverage.products import NATIVE_API_COLUMNS, normalize_dtype, products_in_term

NATIVE_API_DIR = "pytorch/docs/native_api"
CUSTOM_API_DIR = "op-plugin/docs/custom_APIs"
ENV_DIR = "pytorch/docs/environment_variable"

_LINK = re.compile(r"\*\*原生文档\*\*：\s*\[([^\]]*)\]\(([^)]*)\)")
_HEADING = re.compile(r"^(#{1,3})\s+(.*)$")
_ROW = re.compile(r"^\|\s*<term>\s*(.*?)\s*</term>\s*\|\s*([✔✘√×xX])\s*\|")
_ONLY = re.compile(r"`([^`]+)`(?:、`[^`]+`)*\s*仅支持\s*([^。；;\n]*)")
_TERM_PREFIX = re.compile(r"^((?:<term>[^<]*</term>[、/]?\s*)+)[：:]")
_COLUMN_TO_PRODUCT = {title: product for product, title in NATIVE_API_COLUMNS.items()}


def doc_sets(ascend_dir: Path) -> list[tuple[str, Path]]:
    """('2.13.0', folder) for every pytorch_X-Y-Z folder, oldest first."""
    found = []
    for folder in (ascend_dir / NATIVE_API_DIR).glob("pytorch_*"):
        m = re.fullmatch(r"pytorch_(\d+)-(\d+)-(\d+)", folder.name)
        if m and folder.is_dir():
            found.append((tuple(int(x) for x in m.groups()), folder))
    return [(".".join(map(str, v)), f) for v, f in sorted(found)]


_QUALNAME = re.compile(r"^torch(?:\.\w+)+$")


def qualname_from_link(text: str, url: str) -> str | None:
    """The API a 原生文档 link documents: the anchor when it is a dotted torch name (a member on its class's
    page, generated/torch.nn.Module.html#torch.nn.Module.cuda, is the member's row, not the class's), else the
    generated page's name, else the link text.  Anchors that are section ids (onnx.html#torch-onnx-apis) and
    Markdown escapes (\\_\\_init\\_\\_) are not names."""
    text = text.replace("\\_", "_").strip()
    page, _, anchor = url.replace("\\_", "_").partition("#")
    if _QUALNAME.match(anchor):
        return anchor
    m = re.search(r"/generated/([^/]+?)(?:\.html)?$", page)
    if m and _QUALNAME.match(m.group(1)):
        return m.group(1)
    return text if _QUALNAME.match(text) else None


def parse_dtypes(words: str) -> list[str]:
    out = []
    for word in re.split(r"[，,、\s]+|和|或", words):
        dtype = normalize_dtype(word)
        if dtype and dtype not in out:
            out.append(dtype)
    return out


def parse_restrictions(raw: str) -> list[dict]:
    """'`input`仅支持bf16，fp16' lines -> [{'arg': 'input', 'dtypes': [...], 'products': None}];
    a leading '<term>Atlas A2 ...</term>、<term>...</term>：' limits a line to those products."""
    out = []
    for line in raw.splitlines():
        line = line.strip().lstrip("-").strip()
        products = None
        prefix = _TERM_PREFIX.match(line)
        if prefix:
            titles = re.findall(r"<term>([^<]*)</term>", prefix.group(1))
            products = sorted({p for t in titles for p in products_in_term(t)})
            line = line[prefix.end():]
        for m in _ONLY.finditer(line):
            dtypes = parse_dtypes(m.group(2))
            if dtypes:
                args = re.findall(r"`([^`]+)`", m.group(0).split("仅支持")[0])
                out.append({"args": args, "dtypes": dtypes, "products": products})
    return out


def _block_text(lines: list[str]) -> str:
    text = "\n".join(l.rstrip() for l in lines)
    text = re.sub(r"</?div[^>]*>", "", text)
    return text.strip()


def parse_native_api_page(path: Path, rel: str) -> dict[str, dict]:
    """Entries of one support-list page keyed by qualified name."""
    lines = path.read_text(encoding="utf-8").splitlines()
    entries: dict[str, dict] = {}
    heading = ""
    current: dict | None = None
    state = None

    def finish():
        if current is None:
            return
        raw = _block_text(current.pop("_raw"))
        current["raw"] = raw
        current["restrictions"] = parse_restrictions(raw)
        current["cpu_fallback"] = "回退至CPU" in raw
        name = current.pop("_name")
        if name in entries:  # the same API listed twice (e.g. under two headings): keep the first, note the other
            entries[name].setdefault("also", []).append(current["source"])
        else:
            entries[name] = current

    for i, line in enumerate(lines, start=1):
        h = _HEADING.match(line)
        if h:
            if current is not None and state == "raw":
                finish()
                current, state = None, None
            heading = re.sub(r"<[^>]+>", "", h.group(2)).replace("\\_", "_").strip()
            continue
        link = _LINK.search(line)
        if link:
            if current is not None:
                finish()
            name = qualname_from_link(*link.groups())
            if name is None:
                current, state = None, None
                continue
            current = {"_name": name, "_raw": [], "products": {},
                       "source": f"{rel}:{i} (§ {heading})" if heading else f"{rel}:{i}"}
            state = "table"
            continue
        if current is None:
            continue
        row = _ROW.match(line)
        if row and state == "table":
            product = _COLUMN_TO_PRODUCT.get(row.group(1).strip())
            if product:
                current["products"][product] = row.group(2) in "✔√"
            continue
        if "限制与说明" in line:
            state = "raw"
            rest = line.split("：", 1)[1] if "：" in line else ""
            current["_raw"].append(rest)
            continue
        if line.startswith("> <font") or line.startswith("</div>") and state == "raw":
            finish()
            current, state = None, None
            continue
        if state == "raw":
            current["_raw"].append(line)
    if current is not None:
        finish()
    return entries


def parse_native_api(ascend_dir: Path, folder: Path) -> dict[str, dict]:
    apis: dict[str, dict] = {}
    for page in sorted(folder.glob("*.md")):
        rel = page.relative_to(ascend_dir).as_posix()
        for name, entry in parse_native_api_page(page, rel).items():
            if name in apis:
                apis[name].setdefault("also", []).append(entry["source"])
            else:
                apis[name] = entry
    return apis
