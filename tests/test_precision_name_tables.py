"""Lightning's short precision names as keys of a name-to-dtype table (t33c, session 33; heldout35's anemoi-inference
`precisions.py`): `"16": torch.float16`, `"b16-mixed": torch.bfloat16`, `"f16": torch.float16` name the dtype a
config's `precision:` chooses; the entry chooses nothing (policy (a)), like `"bf16": torch.bfloat16` already."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

# anemoi-inference src/anemoi/inference/precisions.py
TABLE = """\
    from functools import cached_property


    class LazyDict:
        def __getitem__(self, key):
            return self._mapping[key]

        @cached_property
        def _mapping(self):
            import torch

            return {
                "16-mixed": torch.float16,
                "16": torch.float16,
                "32": torch.float32,
                "b16-mixed": torch.bfloat16,
                "b16": torch.bfloat16,
                "bf16-mixed": torch.bfloat16,
                "f16": torch.float16,
                "f32": torch.float32,
            }


    PRECISIONS = LazyDict()
    """

# controls: a key that does not name the value's dtype, a key that is no precision name, a number chosen in code
CONTROLS = """\
    import torch

    WIDTHS = {"16": torch.bfloat16}
    DEFAULTS = {"activations": torch.float16}


    def autocast_dtype(config):
        return {"16": torch.float16}.get(config.precision, torch.float32) if config.half else torch.bfloat16
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


@pytest.mark.parametrize("entry", ['"16": torch.float16', '"b16-mixed": torch.bfloat16', '"b16": torch.bfloat16',
                                   '"f16": torch.float16', '"16-mixed": torch.float16'])
def test_short_precision_names_key_a_table_that_chooses_nothing(engine, entry):
    found = codes_by_line(engine, TABLE, "src/anemoi/inference/precisions.py")
    assert not found.get(line_of(TABLE, entry), set()) & {"NPU201", "NPU202"}


def test_other_keys_keep_the_dtype_hint(engine):
    found = codes_by_line(engine, CONTROLS, "src/pkg/dtypes.py")
    assert "NPU201" in found.get(line_of(CONTROLS, '"16": torch.bfloat16'), set())     # "16" is not bf16
    assert "NPU202" in found.get(line_of(CONTROLS, '"activations": torch.float16'), set())
    assert "NPU201" in found.get(line_of(CONTROLS, "else torch.bfloat16"), set())       # chosen in code
