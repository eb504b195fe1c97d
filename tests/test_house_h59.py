"""House item of session 59: the process environment's names (`astnodes.ENVIRON`, `astnodes.ENV_GETS`) and the
variable a read names (`astutil.env_read_key`) are spelled once, for the passes that each spelled them."""
import ast
import inspect

import pytest

from auditor.astnodes import ENV_GETS, ENVIRON
from auditor.rules import load_rules
from auditor.static.astutil import env_read_key
from auditor.static.engine import StaticEngine


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


@pytest.mark.parametrize("source, expected", [
    ('os.environ["LOCAL_RANK"]', "LOCAL_RANK"),
    ('environ["MASTER_ADDR"]', "MASTER_ADDR"),
    ('os.environ.get("CUDA_VISIBLE_DEVICES")', "CUDA_VISIBLE_DEVICES"),
    ('os.getenv("FORCE_CUDA", "0")', "FORCE_CUDA"),
    ('getenv("TORCH_CUDA_ARCH_LIST")', "TORCH_CUDA_ARCH_LIST"),
    ("os.environ[key]", None),
    ('int(os.getenv("WORLD_SIZE", "1"))', None),
    ('config.get("device")', None),
    ("os.getenv()", None),
])
def test_env_read_key_names_the_variable(source, expected):
    assert env_read_key(ast.parse(source, mode="eval").body) == expected


def test_env_read_key_of_a_store_target():
    # `os.environ["X"] = v` names X too: set-if-unset functions compare the read with the store
    target = ast.parse('os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"').body[0].targets[0]
    assert env_read_key(target) == "TORCH_CUDA_ARCH_LIST"


_ARCH_LIST_GET = """import os


def maybe_set_arch_list_env():
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return
    archs = detect_archs()
    os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(archs)
"""


def test_set_if_unset_get_read_is_info(engine):
    # the `os.environ.get("X")` form of a set-if-unset read, named by env_read_key (tq58b tests the `in` form)
    result = engine.analyze_bytes(_ARCH_LIST_GET.encode(), "pkg/arch.py")
    read = {f.severity for f in result.findings if f.symbol == "TORCH_CUDA_ARCH_LIST" and f.line == 5}
    store = {f.severity for f in result.findings if f.symbol == "TORCH_CUDA_ARCH_LIST" and f.line == 8}
    assert read == {"info"} and "warning" in store


def test_passes_spell_the_environment_once():
    import auditor.static.astutil as astutil
    import auditor.static.backend_switches as backend_switches
    import auditor.static.neutral_uses as neutral_uses
    import auditor.static.visitor as visitor
    assert ENVIRON == {"os.environ", "environ"} and "os.getenv" in ENV_GETS
    for module in (astutil, backend_switches, neutral_uses, visitor):
        assert '("os.environ", "environ")' not in inspect.getsource(module)
