"""Entry conventions: every documented return form, clear errors, --hf-config with tiny configs."""
from pathlib import Path

import pytest
import torch

from auditor.entry import EntryError, EntrySpec, load_hf_config_dict, resolve_entry

FIXTURES = Path(__file__).parent / "fixtures" / "trace"
FORMS = FIXTURES / "entry_forms.py"


def test_default_entry_name_tuple_form():
    spec = resolve_entry(FORMS)()
    assert isinstance(spec, EntrySpec)
    assert type(spec.model).__name__ == "Classifier"
    assert len(spec.args) == 1 and spec.args[0].shape == (4, 32) and spec.kwargs == {}
    assert spec.loss_fn is None and spec.optimizer_factory is None
    assert spec.label == "entry_forms.py:audit_entry"


def test_loss_fn_takes_the_output():
    spec = resolve_entry(FORMS, "with_loss")()
    loss = spec.loss_fn(spec.model(*spec.args))
    assert loss.ndim == 0


def test_four_tuple_with_optimizer_factory_and_bare_tensor_input():
    spec = resolve_entry(FORMS, "with_optimizer")()
    assert spec.args[0].shape == (4, 32)
    opt = spec.optimizer_factory(spec.model.parameters())
    assert isinstance(opt, torch.optim.SGD) and opt.defaults["momentum"] == 0.9


def test_dict_form_keyword_inputs_and_optimizer_class():
    spec = resolve_entry(FORMS, "as_dict")()
    assert set(spec.kwargs) == {"x"} and spec.args == ()
    assert isinstance(spec.optimizer_factory(spec.model.parameters()), torch.optim.Adam)


def test_module_colon_callable(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    spec = resolve_entry(None, "entry_forms:with_loss")()
    assert spec.loss_fn is not None and spec.label == "entry_forms:with_loss"


@pytest.mark.parametrize("name, expected", [
    ("only_model", "return (model, inputs)"),
    ("bad_dict", "unknown keys ['input']"),
    ("not_a_module", "not a torch.nn.Module"),
])
def test_unusable_return_values_say_what_to_return(name, expected):
    with pytest.raises(EntryError, match=None) as info:
        resolve_entry(FORMS, name)()
    assert expected in str(info.value)


def test_file_without_entry_gets_the_lines_to_add():
    with pytest.raises(EntryError) as info:
        resolve_entry(FIXTURES / "no_entry.py")
    text = str(info.value)
    assert "defines no entry function 'audit_entry'" in text
    assert "def audit_entry():" in text and "return model, (x,), loss_fn" in text
    assert "--hf-config" in text


def test_missing_entry_is_found_without_running_the_file(tmp_path):
    src = tmp_path / "side_effect.py"
    src.write_text("raise SystemExit('must not run')\n")
    with pytest.raises(EntryError, match="defines no entry function 'main'"):
        resolve_entry(src, "main")


@pytest.mark.parametrize("make, expected", [
    (lambda d: d / "missing.py", "no such file"),
    (lambda d: d, "is a folder"),
])
def test_bad_source_paths(tmp_path, make, expected):
    with pytest.raises(EntryError, match=expected):
        resolve_entry(make(tmp_path))


def test_no_source_and_no_config():
    with pytest.raises(EntryError, match="--hf-config"):
        resolve_entry(None)


def test_hf_config_tiny_llama_builds_causal_lm_with_labels():
    pytest.importorskip("transformers")
    spec = resolve_entry(None, hf_config=FIXTURES / "tiny_llama.json")()
    assert type(spec.model).__name__ == "LlamaForCausalLM"
    assert spec.kwargs["input_ids"].shape == (1, 128)  # capped by max_position_embeddings
    assert torch.equal(spec.kwargs["labels"], spec.kwargs["input_ids"])
    loss = spec.loss_fn(spec.model(*spec.args, **spec.kwargs))
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_hf_config_tiny_vit_builds_image_classifier():
    pytest.importorskip("transformers")
    spec = resolve_entry(None, hf_config=FIXTURES / "tiny_vit.json")()
    assert type(spec.model).__name__ == "ViTForImageClassification"
    assert spec.kwargs["pixel_values"].shape == (1, 3, 32, 32)
    assert spec.loss_fn(spec.model(**spec.kwargs)).ndim == 0


@pytest.mark.parametrize("content, expected", [
    ("{not json", "not valid JSON"),
    ('{"hidden_size": 8}', "needs a 'model_type' key"),
])
def test_hf_config_bad_files(tmp_path, content, expected):
    cfg = tmp_path / "config.json"
    cfg.write_text(content)
    with pytest.raises(EntryError, match=expected):
        load_hf_config_dict(tmp_path)


def test_hf_config_unknown_model_type(tmp_path):
    pytest.importorskip("transformers")
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(EntryError, match="cannot build model_type 'no-such-architecture'"):
        resolve_entry(None, hf_config=cfg)()
