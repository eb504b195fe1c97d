"""House item of session 58: one reading of "this value is the host device" (`astnodes.device_literal`) for the passes
that had each written their own (gates, host_side_values, device_values, host_scopes, unselected_devices)."""
import ast

import pytest

from auditor.astnodes import device_literal


@pytest.mark.parametrize("source, expected", [
    ('"cpu"', "cpu"),
    ('"cpu:0"', "cpu"),
    ('"cuda:1"', "cuda"),
    ('"meta"', "meta"),
    ('torch.device("cpu")', "cpu"),
    ('torch.device("cuda", local_rank)', "cuda"),
    ('device("npu:0")', "npu"),
    ("args.device", None),
    ('f"cuda:{rank}"', None),
    ("torch.device(args.device)", None),
    ("None", None),
    ("0", None),
])
def test_device_literal_reads_strings_and_torch_device_calls(source, expected):
    assert device_literal(ast.parse(source, mode="eval").body) == expected


def test_device_literal_of_no_value():
    assert device_literal(None) is None


def test_passes_share_the_reading():
    # the five passes call the shared reading rather than their own copies
    import auditor.static.device_values as device_values
    import auditor.static.gates as gates
    import auditor.static.host_scopes as host_scopes
    import auditor.static.host_side_values as host_side_values
    import auditor.static.unselected_devices as unselected_devices
    for module in (gates, host_side_values, device_values, host_scopes, unselected_devices):
        assert module.device_literal is device_literal
        assert not hasattr(module, "_cpu_device") and not hasattr(module, "_cpu_value")


@pytest.mark.parametrize("source, expected", [
    ('"FORCE_CUDA" in os.environ', "FORCE_CUDA"),
    ('"TORCH_CUDA_ARCH_LIST" in environ', "TORCH_CUDA_ARCH_LIST"),
    ('"FORCE_CUDA" not in os.environ', None),
    ('key in os.environ', None),
    ('"FORCE_CUDA" in config', None),
    ('os.environ.get("FORCE_CUDA")', None),
])
def test_env_membership_reads_the_variable_an_in_test_names(source, expected):
    # one reading of `"X" in os.environ` for cpu_bindings' build tests and unselected_devices' set-if-unset reads
    from auditor.static.astutil import env_membership
    assert env_membership(ast.parse(source, mode="eval").body) == expected
