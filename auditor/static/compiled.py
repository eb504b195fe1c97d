"""Rules compiled into lookup structures the visitor can query in O(1), plus the trigger words used by
the prefilter: a file or statement containing none of them cannot produce a finding and is not parsed."""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from auditor.rules import Rule
from auditor.static.context import LOCAL_PACKAGE
from auditor.static.hand_builds import compiler_command

WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """'cuda:<int>' -> digits, '*' -> anything (including a hole from an f-string), else literal."""
    out = []
    for piece in re.split(r"(<int>|\*)", pattern):
        if piece == "<int>":
            out.append(r"(?:\d+|\x00)")
        elif piece == "*":
            out.append(r".*")
        else:
            out.append(re.escape(piece))
    return re.compile("^" + "".join(out) + r"\Z", re.S)


def _literal_words(pattern: str) -> set[str]:
    return set(WORD_RE.findall(re.sub(r"<int>|\*", " ", pattern)))


# Components too common in ordinary PyTorch code to make a statement worth parsing on their own.
_COMMON_WORDS = frozenset({
    "torch", "Tensor", "nn", "functional", "utils", "ops", "data", "optim", "autograd", "jit", "fx",
    "distributed", "distributed_c10d", "parallel", "modules", "module", "backends", "_C", "C", "types",
    "F", "Function", "apply", "forward", "backward", "to", "type", "load", "impl", "contrib", "core",
})


# the categories of rules on a third-party library's names (a module an object may hold: `Config.xformers`, t19e)
LIBRARY_CATEGORIES = frozenset({"attention", "kernel", "third_party", "apex"})

# names of credentials (API keys, tokens, secrets): never a CUDA stack setting, whatever their prefix
_CREDENTIAL_SUFFIXES = ("_API_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_PASSWORD")
# names of a remote service's settings (its address, project, namespace, the model it writes): the application reads
# them to reach the service over HTTP, no CUDA library does (tq44b: `NVIDIA_EVALUATOR_URL`, `NVIDIA_PROJECT_ID`,
# `NVIDIA_DATASET_NAMESPACE`, `NVIDIA_OUTPUT_MODEL_DIR` of llama-stack's NeMo providers)
_SERVICE_SUFFIXES = ("_URL", "_URI", "_ENDPOINT", "_HOST", "_PORT", "_NAMESPACE", "_PROJECT_ID", "_CONFIG_ID",
                     "_API_VERSION", "_MODEL_DIR", "_MODEL_NAME", "_MODEL_ID")
# ... read so only under the vendor's own prefix (NVIDIA runs hosted services: NIM, the NeMo microservices); under a
# library's prefix the same suffix is the library's setting (`FLASH_ATTN_URL`: where flash-attn's source is fetched)
_SERVICE_PREFIXES = frozenset({"NVIDIA_"})


@dataclass
class QualMatch:
    rule: Rule
    pattern: str     # the rule pattern that matched
    score: int       # higher = more specific


_WORD_CORE = re.compile(r"(?:[a-z0-9_]|\\w\*)+")     # a flag_re core made of literal word characters and `\w*`
_WORD_RUN = re.compile(r"\w+")
_FLAG_WORDS_KEPT = 500_000
_ANSWER_KEY_CHARS = 200         # longer names and strings are asked again (rare; keeps the memo small)


def _name_glob(pattern: str) -> re.Pattern[str]:
    """`torch.ops.*.*attn*` -> a regex over a dotted name and anything below it; `*` stays inside one name."""
    parts = [re.escape(p).replace(r"\*", r"[A-Za-z0-9_]*") for p in pattern.split(".")]
    return re.compile(r"\.".join(parts) + r"(?:\..*)?\Z")


def _values(rule: Rule) -> tuple[str, ...]:
    """The values a keyword rule answers (`keyword_values`), empty for a rule that answers any value."""
    return tuple(rule.extra.get("keyword_values") or ())


def _glob_word(pattern: str) -> str:
    """A `flagname` glob as a regular expression over one identifier: `*` is any run of word characters."""
    return "".join(r"\w*" if ch == "*" else re.escape(ch) for ch in pattern)


@dataclass
class CompiledRules:
    rules: tuple[Rule, ...]
    exact: dict[str, list[Rule]] = field(default_factory=dict)          # qualified name -> rules
    # rules with `extra: {stack: true}` report in addition to the most specific rule for a name (a second
    # category for the same expression: torch.cuda.is_bf16_supported is a device and a precision finding)
    stacked: dict[str, list[Rule]] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)         # '!torch.ops.aten': it and all below it
    excluded_below: set[str] = field(default_factory=set)   # '!triton.language.*': only the names below it
    segments: dict[str, Rule] = field(default_factory=dict)   # '*.triton.*': any package path through 'triton'
    # '*.*flash_attn*.*': a package path through a part the glob names (`vllm.vllm_flash_attn`), after exact segments
    segment_globs: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    import_excluded: list[str] = field(default_factory=list)   # `import: ["!pkg.sub"]`: modules no import rule reports
    # '!fla.models.*.configuration_*': names (and modules, for imports) a glob below the top-level name excludes,
    # it and all below it (a package's per-model config modules, t17b)
    excluded_globs: list[re.Pattern[str]] = field(default_factory=list)
    import_excluded_globs: list[re.Pattern[str]] = field(default_factory=list)
    # '*_cuda': a top-level module named by a glob (compiled extension modules: `import selective_scan_cuda`),
    # with everything below it; tried after every exact name (stacked ones report beside the exact rule)
    module_globs: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    stacked_globs: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    # `!cute_kernels` in a stacked rule with module globs: a package on PyPI its globs name, which another rule reports
    stacked_globs_not: set[str] = field(default_factory=set)
    # stacked rules' patterns with a glob below the top-level name (`torch.ops.*.*attn*`): a second category for a
    # name another rule of another category reports (see match_stacked)
    stacked_name_globs: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    stacked_name_not: list[tuple[re.Pattern[str], Rule]] = field(default_factory=list)
    module_glob_re: re.Pattern[str] | None = None    # prefilter: a file naming no such module cannot match
    methods: dict[str, list[Rule]] = field(default_factory=dict)
    attributes: dict[str, list[Rule]] = field(default_factory=dict)
    # `callname: [is_flash_attn_2_available]`: a call whose callee's last name is this, wherever it was
    # defined or imported from (feature-detection helpers live in every project); all its rules report
    callnames: dict[str, list[Rule]] = field(default_factory=dict)
    # `callname: ["*_nccl*", "*Nccl*", "!*hccl*"]`: globs over the callee's last name (case-sensitive, so `*Nccl*`
    # is not `AsyncClient`; `*` = word characters), tried when no exact callname matched; a name a `!` glob matches
    # is left alone. Their cores join flag_re (a case-insensitive prefilter).
    callname_globs: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    callname_not: list[re.Pattern[str]] = field(default_factory=list)
    # `flagname: ["*flash_attn*available*"]`: a feature flag read by a test (`if _FLASH_ATTN_AVAILABLE:`), matched by
    # its name case-insensitively wherever it was defined or imported from; flag_re finds the lines that may hold one
    flagnames: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    flag_re: re.Pattern[str] | None = None
    flag_in_words: bool = False     # every match of flag_re lies inside one run of word characters
    # the lowercased runs of word characters flag_re finds something in, and those it finds nothing in (shared by the
    # files of a run)
    _flag_words: set[str] = field(default_factory=set, repr=False, compare=False)
    _plain_words: set[str] = field(default_factory=set, repr=False, compare=False)
    # `keyword: ["use_fp8*"]`: a keyword argument of any call, by its name (`*` = word characters), switched on
    # (a value other than False / None / 0): `Runner(use_fp8_gemms=True)`; flag_re also finds their lines
    keywords: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    # `keyword: ["device=gpu", "update_parameters(gpus_per_node)"]`: a keyword argument by its name and the value a
    # literal gives it (fnmatch, case-insensitive), optionally only in calls of one callee: its last name, or a dotted
    # name compared with the call's qualified name (`pytorch_lightning.Trainer(gpus)`: not a project's own `Trainer`)
    keyword_values: list[tuple[str | None, re.Pattern[str], str | None, str, Rule]] = field(default_factory=list)
    strings: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    # string rules with `extra: {stack: true}`: a second category for a value another string rule reports (RWKV's
    # strategy "cuda fp16" names a device and a dtype, t24a)
    strings_stacked: list[tuple[re.Pattern[str], str, Rule]] = field(default_factory=list)
    # answers of match_keywords / match_string by name (shared by the files of a run): each asks ~100-300 regexes
    _keyword_answers: dict[tuple[str, bool], list[tuple[Rule, str]]] = field(default_factory=dict, repr=False,
                                                                             compare=False)
    _string_answers: dict[str, tuple[Rule, str] | None] = field(default_factory=dict, repr=False, compare=False)
    # every string pattern as one alternation (`_any_string`): a value none of them matches (nearly every string of a
    # file) is answered by one match instead of one per pattern; None where the patterns cannot be joined
    _strings_any: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    env_exact: dict[str, list[Rule]] = field(default_factory=dict)
    env_prefixes: list[tuple[str, Rule]] = field(default_factory=list)
    # `*_CUDA_ARCHITECTURES`: a project's own name for a CUDA setting (TCNN_CUDA_ARCHITECTURES), matched by its end
    env_suffixes: list[tuple[str, Rule]] = field(default_factory=list)
    env_stacked: dict[str, list[Rule]] = field(default_factory=dict)   # a second category for a variable
    env_stacked_suffixes: list[tuple[str, Rule]] = field(default_factory=list)   # the same by suffix (`*_SKIP_CUDA_BUILD`)
    # a project file's setting of a variable (`ENV FORCE_CUDA="1"`, `export ...`, a command prefix) reported by
    # another rule than its reads (extra.sets_only, t15q): never matched by match_env
    env_set: dict[str, Rule] = field(default_factory=dict)
    imports: list[tuple[str, Rule]] = field(default_factory=list)       # module prefix -> rule
    files: list[tuple[str, Rule]] = field(default_factory=list)
    cxx_names: list[tuple[str, Rule]] = field(default_factory=list)
    coverage_rules: list[Rule] = field(default_factory=list)
    trigger_words: set[str] = field(default_factory=set)   # words of non-qualname matchers
    file_words: set[str] = field(default_factory=set)      # a file with none of these cannot match
    # qualified-name prefix -> words a reference below it must contain (see _index_qualnames)
    below: dict[str, frozenset[str]] = field(default_factory=dict)
    # the trigger words' prefix and suffix tests, one pattern each (has_trigger_prefix)
    trigger_prefix_parts: tuple[re.Pattern[str], ...] = ()
    # library modules a chain may reach through an object that holds them (`Config.xformers.ops.<fn>`, t19e): the
    # first names of library rules' exact names of three segments or more, and a line prefilter for such chains
    held_heads: frozenset[str] = frozenset()
    held_module_re: re.Pattern[str] | None = None
    namespaces: set[str] = field(default_factory=set)      # names a prefix rule covers ('torch.cuda.*' -> torch.cuda)
    env_in_text_re: re.Pattern[str] | None = None

    @classmethod
    def build(cls, rules: tuple[Rule, ...], extra_exact: dict[str, Rule] | None = None) -> "CompiledRules":
        c = cls(rules=rules)
        words: set[str] = set()
        prefix_words: list[str] = []
        suffix_words: list[str] = []
        for rule in rules:
            for kind, values in rule.match.items():
                for v in values:
                    if kind == "qualname":
                        if v.startswith("*.") and v.endswith(".*") and "*" in v[2:-2]:
                            c.segment_globs.append((re.compile(_glob_word(v[2:-2]) + r"\Z"), v, rule))
                            continue
                        if v.startswith("*.") and v.endswith(".*"):
                            c.segments.setdefault(v[2:-2], rule)
                            words.add(v[2:-2])
                            continue
                        base = v[:-2] if v.endswith(".*") else v
                        if rule.extra.get("stack") and base.startswith("!") and "*" in v.partition(".")[2]:
                            # `!torch.ops.vllm.*` in a stacked rule: this rule's name globs skip it (other rules
                            # keep reporting the name)
                            c.stacked_name_not.append((_name_glob(v[1:].removesuffix(".*")), rule))
                            continue
                        if rule.extra.get("stack") and base.startswith("!") and "*" not in base and "." not in base:
                            c.stacked_globs_not.add(base[1:])
                            continue
                        if rule.extra.get("stack") and "*" in base.partition(".")[2] \
                                and "*" not in base.split(".", 1)[0]:
                            c.stacked_name_globs.append((_name_glob(base), v, rule))
                            continue
                        if base.startswith("!") and "*" in base.split(".", 1)[0]:
                            # `!cuda_util*`: top-level modules that a module glob (`cuda_*`) must leave alone
                            c.excluded_globs.append(_name_glob(base[1:]))
                            continue
                        if "*" in base.split(".", 1)[0]:
                            if "." in base:
                                raise ValueError(f"{rule.code}: module glob {v!r} must be one top-level name")
                            entry = (re.compile(_glob_word(base) + r"\Z"), v, rule)
                            (c.stacked_globs if rule.extra.get("stack") else c.module_globs).append(entry)
                            continue
                        if rule.extra.get("stack"):
                            c.stacked.setdefault(base, []).append(rule)
                            words.add(base.rsplit(".", 1)[-1])
                            continue
                        if base.startswith("!") and "*" in base and not v.endswith(".*"):
                            c.excluded_globs.append(_name_glob(base[1:]))
                            continue
                        if base.startswith("!"):
                            (c.excluded_below if v.endswith(".*") else c.excluded).add(base[1:])
                            continue
                        c.exact.setdefault(base, []).append(rule)
                        if v.endswith(".*"):
                            c.namespaces.add(base)
                    elif kind == "method":
                        c.methods.setdefault(v, []).append(rule)
                        words.add(v)
                    elif kind == "attribute":
                        c.attributes.setdefault(v, []).append(rule)
                        words.add(v)
                    elif kind == "callname" and v.startswith("!"):
                        c.callname_not.append(re.compile(_glob_word(v[1:])))
                    elif kind == "callname" and "*" in v:
                        c.callname_globs.append((re.compile(_glob_word(v)), v, rule))
                    elif kind == "callname":
                        c.callnames.setdefault(v, []).append(rule)
                        words.add(v)
                    elif kind == "flagname":
                        c.flagnames.append((re.compile(_glob_word(v), re.IGNORECASE), v, rule))
                    elif kind == "keyword" and ("=" in v or "(" in v):
                        callee, _, inner = v.rstrip(")").rpartition("(")
                        name, eq, value = inner.partition("=")
                        c.keyword_values.append((callee or None, re.compile(_glob_word(name) + r"\Z"),
                                                 value.lower() if eq else None, v, rule))
                    elif kind == "keyword":
                        c.keywords.append((re.compile(_glob_word(v) + r"\Z"), v, rule))
                    elif kind == "string":
                        (c.strings_stacked if rule.extra.get("stack") else c.strings).append(
                            (_pattern_regex(v), v, rule))
                        lit = _literal_words(v)
                        if not lit:
                            raise ValueError(f"{rule.code}: string pattern {v!r} has no literal word to prefilter on")
                        # any one word of the literal must appear; take the rarest-looking one. A word the pattern
                        # continues with digits (`+cu<int>`: the text's word is `cu130`) is a prefix (tp49a)
                        rarest = max(lit, key=lambda w: (w not in _COMMON_WORDS, len(w), w))
                        if f"{rarest}<int>" in v:
                            prefix_words.append(rarest)
                        else:
                            words.add(rarest)
                    elif kind == "env" and rule.extra.get("sets_only"):
                        c.env_set.setdefault(v, rule)
                        words.add(v)
                    elif kind == "env":
                        if rule.extra.get("stack") and v.startswith("*"):
                            # `*_SKIP_CUDA_BUILD` (t14u): a suffix, as the env rules' own suffixes; the name's
                            # last part is the word the prefilter looks for
                            c.env_stacked_suffixes.append((v[1:], rule))
                            suffix_words.append(v[1:])
                        elif rule.extra.get("stack"):     # TORCH_CUDA_ARCH_LIST is device and kernel
                            c.env_stacked.setdefault(v, []).append(rule)
                            words.add(v)
                        elif v.endswith("*"):
                            c.env_prefixes.append((v[:-1], rule))
                            prefix_words.append(v[:-1])
                        elif v.startswith("*"):
                            c.env_suffixes.append((v[1:], rule))
                            suffix_words.append(v[1:])
                        else:
                            c.env_exact.setdefault(v, []).append(rule)
                            words.add(v)
                    elif kind == "import" and v.startswith("!") and "*" in v:
                        c.import_excluded_globs.append(_name_glob(v[1:]))
                    elif kind == "import" and v.startswith("!"):
                        c.import_excluded.append(v[1:])   # `!deepspeed.accelerator`: no import rule for it or below
                    elif kind == "import":
                        c.imports.append((v, rule))
                        # every import statement the rule reports spells v whole (`import horovod.torch`, `from
                        # horovod.torch import x`; relative imports never match): any one part of it will do, and
                        # the rarest-looking keeps `torch` lines from being parsed for NPU144
                        words.add(max(v.split("."), key=lambda w: (w not in _COMMON_WORDS, len(w), w)))
                    elif kind == "file":
                        c.files.append((v, rule))
                    elif kind == "cxx_name":
                        c.cxx_names.append((v, rule))
                    elif kind == "coverage":
                        c.coverage_rules.append(rule)
        for name, rule in (extra_exact or {}).items():
            c.exact.setdefault(name, []).append(rule)
        c._index_qualnames()
        c._index_held_heads()
        c.trigger_words = words
        c.file_words = words | {n.rsplit(".", 1)[-1] for n in c.exact} | set().union(*c.below.values())
        if prefix_words or suffix_words:
            alt = "|".join(re.escape(p) for p in sorted(set(prefix_words), key=len, reverse=True))
            ends = "|".join(r"\w" + re.escape(p) + r"\b" for p in sorted(set(suffix_words), key=len, reverse=True))
            # one pattern per part: the `\w...` ends in one alternation with the prefixes make `re` try every
            # alternative at every character (four times slower over a file)
            c.trigger_prefix_parts = tuple(re.compile(x) for x in (alt and r"\b(?:" + alt + ")", ends) if x)
        globs = [p for p, _, _ in c.module_globs + c.stacked_globs + c.segment_globs]
        if globs:
            c.module_glob_re = re.compile(r"\b(?:" + "|".join(g.pattern[:-2] for g in globs) + r")\b")
        c.callname_globs.sort(key=lambda g: not g[2].extra.get("glob_first"))     # (stable: the rest keep code order)
        if c.flagnames or c.keywords or c.callname_globs or c.keyword_values:
            # a prefilter (a line it finds is parsed, the visitor decides): the globs' cores, no leading `\w*`
            cores = sorted({_glob_word(v.strip("*")) for _, v, _ in c.flagnames + c.keywords + c.callname_globs}
                           | {rx.pattern[:-2] for _, rx, _, _, _ in c.keyword_values},
                           key=len, reverse=True)
            c.flag_re = re.compile("|".join(cores).lower())     # searched in the lowercased text
            # every core spells word characters only: a match lies inside one identifier (see flag_offsets)
            c.flag_in_words = all(_WORD_CORE.fullmatch(core.lower()) for core in cores)
        env_names = sorted(c.env_exact, key=len, reverse=True)
        env_alts = [re.escape(n) for n in env_names] + [re.escape(p) + r"[A-Z0-9_]+" for p, _ in c.env_prefixes] \
            + [r"[A-Z0-9_]+" + re.escape(p) for p, _ in c.env_suffixes]
        if env_alts:
            # 'CUDA_VISIBLE_DEVICES=0 python ...' inside a shell command string
            c.env_in_text_re = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(env_alts) + r")=")
        return c

    def has_trigger_prefix(self, text: str) -> bool:
        """Whether a trigger word's prefix or suffix pattern finds something in `text` (one part at a time)."""
        return any(part.search(text) for part in self.trigger_prefix_parts)

    def flag_offsets(self, text: str) -> list[int]:
        """Where flag_re matches in the lowercased text, as offsets whose line numbers are those of
        `[m.start() for m in flag_re.finditer(text.lower())]`: the engine reads only their lines.

        flag_re is an alternation of some 150 cores, tried at every character of the file (a tenth of a cold run).
        When every core is made of word characters (`flag_in_words`) and lowercasing keeps the text's length,
        a match lies inside one run of word characters and every run holding a match holds the start of one of
        finditer's matches (no match crosses a run's ends). So the distinct runs of the file are searched once each,
        with the answers kept for the whole run, and the offsets are where the runs that match start."""
        if self.flag_re is None:
            return []
        low = text.lower()
        if not (self.flag_in_words and len(low) == len(text)):    # `İ` lowers to two characters: offsets move
            return [m.start() for m in self.flag_re.finditer(low)]
        flagged, plain, search = self._flag_words, self._plain_words, self.flag_re.search
        if len(flagged) + len(plain) > _FLAG_WORDS_KEPT:
            flagged.clear()     # bounded memory over a very large tree
            plain.clear()
        runs = set(_WORD_RUN.findall(low))
        for run in runs - flagged - plain:      # (set operations: most runs are known from earlier files)
            (flagged if search(run) is not None else plain).add(run)
        hits = list(runs & flagged)
        if not hits:
            return []
        rx = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(hits, key=len, reverse=True))) + r")(?!\w)")
        return [m.start() for m in rx.finditer(low)]

    def _index_qualnames(self) -> None:
        """Which words make a statement worth parsing for qualified-name rules.

        A chain resolves only through one of the file's aliases (local L bound to Q), and spells out every
        component of the name after Q. So for a rule name N below Q, any one component after Q is a sound
        trigger; we pick a rare one ('cuda' for torch.cuda.Event, 'gather' for torch.distributed.gather)
        rather than common words such as 'Tensor' or 'nn'. The engine adds, per file, below[Q] for each
        alias, and L itself when Q matches a rule."""
        from collections import Counter

        names = [n.split(".") for n in self.exact]
        share = Counter(part for parts in names for part in set(parts))
        below: dict[str, set[str]] = {}
        for parts in names:
            for i in range(1, len(parts)):
                rest = parts[i:]
                # (`__setitem__`: an item store `REGISTRY[k] = v` spells no such word; the name before it does)
                candidates = [p for p in rest if p not in _COMMON_WORDS and p != "__setitem__"] or rest[-1:]
                word = max(candidates, key=lambda p: (share[p], p))
                below.setdefault(".".join(parts[:i]), set()).add(word)
        self.below = {k: frozenset(v) for k, v in below.items()}

    def _index_held_heads(self) -> None:
        """`held_heads` / `held_module_re` (see the fields). Not torch (its names resolve through the file's own
        imports) nor importlib (a standard-library module)."""
        heads = {name.split(".", 1)[0] for name, rules in self.exact.items()
                 if name.count(".") >= 2 and any(r.category in LIBRARY_CATEGORIES for r in rules)}
        heads -= {"torch", "importlib"}
        self.held_heads = frozenset(heads)
        if heads:
            alt = "|".join(re.escape(h) for h in sorted(heads))
            self.held_module_re = re.compile(r"\w\s*\.\s*(?:" + alt + r")\s*\.\s*\w+\s*\.")

    # -- queries ---------------------------------------------------------------------------------

    def match_qualname(self, qualname: str) -> QualMatch | None:
        """Most specific rule for a qualified name: the rule for the name itself, else for its nearest
        ancestor ('torch.cuda.*' registers 'torch.cuda', which covers 'torch.cuda.foo.bar')."""
        if self.excluded_globs and self.excluded_by_glob(qualname):
            return None
        name = qualname
        while True:
            if name in self.excluded or (name != qualname and name in self.excluded_below):
                return None
            rules = self.exact.get(name)
            if rules:
                return QualMatch(rules[0], name, len(name))
            cut = name.rfind(".")
            if cut <= 0:
                m = self._match_segment(qualname) if self.segments or self.segment_globs else None
                if m is None and self.module_globs:
                    m = self._match_glob(qualname, self.module_globs)
                return m
            name = name[:cut]

    def excluded_by_glob(self, qualname: str) -> bool:
        """A name a `!pkg.*.glob_*` pattern excludes (it or an ancestor)."""
        return any(g.match(qualname) for g in self.excluded_globs)

    def is_namespace(self, qualname: str) -> bool:
        """A module a prefix rule covers as a whole (torch.cuda, torch.backends.cudnn, pynvml), not a value in it."""
        return qualname in self.namespaces

    def knows(self, qualname: str) -> bool:
        """Whether some rule reports this name (the most specific one, or a stacked one)."""
        return self.match_qualname(qualname) is not None or bool(
            (self.stacked or self.stacked_globs) and self.match_stacked(qualname))

    def match_stacked(self, qualname: str) -> list[tuple[Rule, str]]:
        """Stacked rules for a name or any of its ancestors, each once, with the pattern that matched."""
        out: list[tuple[Rule, str]] = []
        name = qualname
        while name:
            for rule in self.stacked.get(name, ()):
                if all(r is not rule for r, _ in out):
                    out.append((rule, name))
            name = name[:name.rfind(".")] if "." in name else ""
        for regex, pattern, rule in self.stacked_name_globs:
            # `torch.ops.sgl_kernel.merge_state`: a custom op the kernel rule reports that is an attention kernel
            if regex.match(qualname) and all(r is not rule for r, _ in out) \
                    and not any(r is rule and no.match(qualname) for no, r in self.stacked_name_not):
                primary = self.match_qualname(qualname)
                if primary is not None and primary.rule.category != rule.category:
                    out.append((rule, pattern))
        if self.stacked_globs:
            m = self._match_glob(qualname, self.stacked_globs)
            if m is not None and qualname.removeprefix(".").split(".", 1)[0] not in self.stacked_globs_not:
                out.append((m.rule, m.pattern))
        if self.segments or self.segment_globs:
            # a package's own Triton kernel module (`flash_attn.ops.triton.layer_norm`, `mamba_ssm.ops.triton.ssd_combined`)
            # is a kernel implementation whatever it computes: beside the package's rule (attention, third_party),
            # the segment rule reports its category too
            seg = self._match_segment(qualname)
            if seg is not None and seg.rule.extra.get("dependency_only"):
                seg = None      # a dependency's CUDA-only part (`torch.backends.cudnn`): the package's own rule is it
            primary = self.match_qualname(qualname) if seg is not None else None
            if seg is not None and primary is not None and primary.rule.category != seg.rule.category \
                    and all(r is not seg.rule for r, _ in out):
                out.append((seg.rule, seg.pattern))
        return out

    @staticmethod
    def _match_glob(qualname: str, globs: list[tuple[re.Pattern[str], str, Rule]]) -> QualMatch | None:
        """`*_cuda`: the top-level module of the name (a compiled extension imported by its own name, or from its
        package's folder: `.roiaware_pool3d_cuda`, context._bind_relative_extension)."""
        top = qualname.removeprefix(".").split(".", 1)[0]
        for regex, pattern, rule in globs:
            if regex.match(top):
                return QualMatch(rule, pattern, 0)
        return None

    def _match_segment(self, qualname: str) -> QualMatch | None:
        """`*.triton.*`: a name imported from a project's own `....triton....` package (its Triton kernels);
        only when no rule knows the name or a package above it, and not in a test suite's helpers. A
        `dependency_only` rule's segment (`*.tensorrt.*`: `mmcv.tensorrt.TRTWraper`) is read on absolute paths only."""
        parts = qualname.split(".")
        if any(p.startswith("test") for p in parts):
            return None
        relative = parts[0] == LOCAL_PACKAGE
        for i, part in enumerate(parts[1:], 1):
            rule = self.segments.get(part)
            if rule is not None and not (rule.extra.get("dependency_only") and (
                    relative or any(p[:1].isupper() for p in parts[1:i]))):
                # a dependency's part is reached through its modules (`mmcv.tensorrt`), not a class's member
                # (`Device.tensorrt`, an enum value another rule reads)
                return QualMatch(rule, f"*.{part}.*", 0)
        for part in parts[1:-1] if self.segment_globs else ():    # a module on the path, not the name imported
            for regex, pattern, rule in self.segment_globs:
                if regex.match(part):
                    return QualMatch(rule, pattern, 0)
        return None

    def is_segment(self, part: str) -> bool:
        """Whether a segment rule names a package path through `part` (`*.triton.*`, `*.*flash_attn*.*`): a relative
        import through such a module is bound for it (context.build_context); a test suite's module never is."""
        if part.startswith("test"):
            return False
        rule = self.segments.get(part)
        if rule is not None:
            return not rule.extra.get("dependency_only")    # a dependency's module, never the project's own
        return any(regex.match(part) for regex, _, _ in self.segment_globs)

    def inside_segment_glob(self, qualname: str, rel: str) -> bool:
        """Whether a file lies inside the module a segment glob matched in `qualname` (`vllm/vllm_flash_attn/cute/x.py`
        importing `vllm.vllm_flash_attn.cute.fa_logging`): the vendored package's own plumbing, which its own
        findings cover. The package's `__init__.py` is not inside: its imports are the interface it re-exports."""
        path = rel.replace("\\", "/").split("/")
        if path[-1] == "__init__.py":
            return False
        here = set(path[:-1])
        for part in qualname.split(".")[1:-1]:
            if part in here and any(regex.match(part) for regex, _, _ in self.segment_globs):
                return True
        return False

    def match_launch(self, decorators: list[str]) -> tuple[str, QualMatch] | None:
        """A launch `kernel[grid](...)` of a local function decorated with D is matched as the name `D[]`
        (so `triton.jit[]` for Triton, `numba.cuda.jit[]` for Numba; walking up, `triton` covers both)."""
        for qual in decorators:
            m = self.match_qualname(qual + "[]")
            if m is not None:
                return qual + "[]", m
        return None

    def match_string(self, value: str, in_command: bool = False) -> tuple[Rule, str] | None:
        """The first string rule for a value. A pattern a rule lists under `in_compiler_command` counts only in a
        compiler's command line (`g++ x.cc -o x -lcudart`, not a help text ending in the flag), or in a part of one
        (`in_command`: an implicit concatenation's later line)."""
        if in_command:
            return next(((rule, pattern) for regex, pattern, rule in self.strings if regex.match(value)), None) \
                if self._any_string(value) else None
        if value in self._string_answers:
            return self._string_answers[value]
        found = next(((rule, pattern) for regex, pattern, rule in self.strings if regex.match(value) and (
            pattern not in rule.extra.get("in_compiler_command", ()) or compiler_command(value))), None) \
            if self._any_string(value) else None
        if len(value) <= _ANSWER_KEY_CHARS:
            if len(self._string_answers) > _FLAG_WORDS_KEPT:
                self._string_answers.clear()     # bounded memory over a very large tree
            self._string_answers[value] = found
        return found

    def match_compared_string(self, value: str) -> tuple[Rule, str] | None:
        """The first `compared_operand` string rule for a value that is a comparison's operand (`args.method == "cudart"`
        names the engine a branch selects, not the library a build links: NPU489 before NPU064, t28a)."""
        return next(((rule, pattern) for regex, pattern, rule in self.strings
                     if rule.extra.get("compared_operand") and regex.match(value)), None) \
            if self._any_string(value) else None

    def _any_string(self, value: str) -> bool:
        """Whether some string pattern matches the value at its start: `(?:p1)|(?:p2)|...` matches there exactly when
        one alternative does (each pattern is wrapped whole; the patterns share one set of flags and use no group
        references, whose numbers the join would shift); True, so every pattern is asked, where they cannot be joined."""
        if self._strings_any is None:
            flags = {regex.flags for regex, _, _ in self.strings}
            texts = [regex.pattern for regex, _, _ in self.strings]
            joinable = len(flags) == 1 and not any(re.search(r"\\[1-9]|\(\?P=|\(\?[aiLmsux-]+[:)]", t) for t in texts)
            try:
                self._strings_any = re.compile("|".join(f"(?:{t})" for t in texts), flags.pop()) if joinable \
                    else re.compile("")
            except re.error:
                self._strings_any = re.compile("")
        return self._strings_any.match(value) is not None

    def stacked_strings(self, value: str) -> list[tuple[Rule, str]]:
        """The stacked string rules for a value (a second category beside its own string rule)."""
        return [(rule, pattern) for regex, pattern, rule in self.strings_stacked if regex.match(value)]

    def stacked_env(self, name: str) -> list[Rule]:
        """The stacked rules for an environment variable (a second category beside its own rule): exact names, then
        suffixes (`*_SKIP_CUDA_BUILD`), each rule once."""
        rules = list(self.env_stacked.get(name, ()))
        if _ENV_NAME_RE.match(name):
            rules += [r for suffix, r in self.env_stacked_suffixes
                      if name.endswith(suffix) and len(name) > len(suffix) and r not in rules]
        return rules

    def match_env(self, name: str) -> Rule | None:
        if not _ENV_NAME_RE.match(name):
            return None     # 'CUDA_VISIBLE_DEVICES=0 python x.py' is a command line: env_in_text_re reads it
        rules = self.env_exact.get(name)
        if rules:
            return rules[0]
        best = None
        for prefix, rule in self.env_prefixes:
            if name.startswith(prefix) and len(name) > len(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, rule)
        if best is not None and (name.endswith(_CREDENTIAL_SUFFIXES)
                                 or best[0] in _SERVICE_PREFIXES and name.endswith(_SERVICE_SUFFIXES)):
            # `NVIDIA_API_KEY` (NVIDIA's hosted API catalogue, langchain-nvidia-ai-endpoints, NeMo-Curator's
            # tutorials), `NVIDIA_NGC_TOKEN`, `NVIDIA_BASE_URL`: a credential or setting of a remote service under a
            # vendor prefix, read by no CUDA library (tp42, project test104; tq44b)
            return None
        if best is None:
            for suffix, rule in self.env_suffixes:
                if name.endswith(suffix) and len(name) > len(suffix):
                    return rule
        return best[1] if best else None

    def match_import(self, module: str) -> Rule | None:
        if any(module == ex or module.startswith(ex + ".") for ex in self.import_excluded) or \
                any(g.match(module) for g in self.import_excluded_globs):
            return None
        for prefix, rule in self.imports:
            if module == prefix or module.startswith(prefix + "."):
                return rule
        return None

    def match_keyword(self, name: str) -> tuple[Rule, str] | None:
        for regex, pattern, rule in self.keywords:
            if regex.match(name) and not rule.extra.get("option_only") and not rule.extra.get("parameters_only"):
                return rule, pattern
        return None

    def match_keywords(self, name: str, parameter: bool = False) -> list[tuple[Rule, str]]:
        """Every keyword rule for a setting's name, the first of each category: one name can need two changes
        (`use_cuda_fp16=True` picks the CUDA kernels and float16: a device and a precision finding). `parameter`: the
        name is a function parameter's (its default), which `parameters_only` rules also answer (t17c). The list is
        shared by every asker of the same name: read it, never change it."""
        known = self._keyword_answers.get((name, parameter))
        if known is not None:
            return known
        out: list[tuple[Rule, str]] = []
        for regex, pattern, rule in self.keywords:
            if rule.extra.get("option_only"):
                continue          # a command-line option's name only (`match_option_keywords`)
            if rule.extra.get("parameters_only") and not parameter:
                continue          # a bare `cuda` names table keys and variables too; only a parameter's default here
            # one rule a category; two rules of a category that answer different values of the setting (`attn_impl`:
            # NPU897 "xformers", NPU952 "triton") are two choices, each read against its own values (tk44)
            if regex.match(name) and all(r.category != rule.category or _values(r) != _values(rule) for r, _ in out):
                out.append((rule, pattern))
        if len(name) <= _ANSWER_KEY_CHARS:
            if len(self._keyword_answers) > _FLAG_WORDS_KEPT:
                self._keyword_answers.clear()
            self._keyword_answers[(name, parameter)] = out
        return out

    def match_option_keywords(self, name: str) -> list[tuple[Rule, str]]:
        """The `option_only` keyword rules for a command-line option's name (`--cuda`, `--gpu_id`: t14v)."""
        return [(rule, pattern) for regex, pattern, rule in self.keywords
                if rule.extra.get("option_only") and regex.match(name)]

    def match_keyword_value(self, callee: str | None, name: str, value: str | None,
                            qual: str | None = None) -> tuple[Rule, str] | None:
        """A `name=value` / `callee(name)` keyword pattern: `value` is the literal's text (None: not a literal);
        `callee` is the call's last name, `qual` its qualified name."""
        for want_callee, regex, want_value, pattern, rule in self.keyword_values:
            if want_callee is not None and want_callee != (qual if "." in want_callee else callee):
                continue
            if not regex.match(name):
                continue
            if want_value is not None and (value is None or not fnmatch.fnmatchcase(value.lower(), want_value)):
                continue
            return rule, pattern
        return None

    def match_callname_glob(self, name: str) -> tuple[Rule, str] | None:
        if any(rx.fullmatch(name) for rx in self.callname_not):
            return None
        for regex, pattern, rule in self.callname_globs:
            if regex.fullmatch(name):
                return rule, pattern
        return None

    def match_flag(self, name: str) -> tuple[Rule, str] | None:
        for regex, pattern, rule in self.flagnames:
            if regex.fullmatch(name):
                return rule, pattern
        return None

    def match_file(self, name: str) -> Rule | None:
        for pattern, rule in self.files:
            if fnmatch.fnmatch(name, pattern):
                return rule
        return None
