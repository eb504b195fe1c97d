"""tq58c (session 58; TUNED on heldout76 / heldout75): a method of the tree's own plain class is not "named" by an
attribute that only steps through an imported module's path (`torch.nn.parallel.DistributedDataParallel` does not
name a `parallel()` method) or that a test only reads as a truth value (`if training_args.do_train:` does not name a
`do_train()` method). Each shape on code like the trees it came from, beside a control that keeps its finding."""
from __future__ import annotations

from auditor.static.call_defaults import FACT_INERT_REFS, default_facts
from tests.static_snippets import dedented_tree, severity_at

# a copied in-context-learning wrapper (MetaICL-like): training helpers beside the inference the tree runs
_WRAPPER = '''
import torch


class ICLModel(object):
    def __init__(self, local_rank=-1):
        self.local_rank = local_rank
        self.model = None

    def parallel(self):
        if self.local_rank >= 0:
            self.model = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=[self.local_rank])
        else:
            self.model = torch.nn.DataParallel(self.model)

    def do_train(self, batches, optimizer):
        from apex import amp
        for batch in batches:
            loss = self.model(batch.cuda())
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()

    def do_predict(self, batch):
        with torch.no_grad():
            return self.model(batch.cuda())
'''
_EVAL = '''
from ICL.icl.model import ICLModel

model = ICLModel()
print(model.do_predict(None))
'''
# the tree's own Trainer-based training script: reads HF TrainingArguments' `do_train` field, never a method
_TRAIN = '''
import os

from transformers import HfArgumentParser, TrainingArguments


def main():
    (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    if os.path.isdir(training_args.output_dir) and training_args.do_train and not training_args.overwrite_output_dir:
        raise ValueError("output directory exists")


if __name__ == "__main__":
    main()
'''
_MODEL = "evaluation/ICL/icl/model.py"


def test_module_path_steps_and_truth_tests_are_inert_refs():
    facts = default_facts(_WRAPPER.encode() + _TRAIN.encode())
    inert = set(facts.get(FACT_INERT_REFS) or ())
    assert {".parallel", ".do_train", ".nn"} <= inert, inert
    assert ".model" not in inert      # `self.model` handed on to DistributedDataParallel


def test_methods_named_only_by_a_module_path_or_a_truth_test_are_info(tmp_path):
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": _EVAL, "train.py": _TRAIN})
    dp = severity_at(found, _MODEL, _WRAPPER, "torch.nn.DataParallel")
    assert dp and set(dp.values()) == {"info"}, dp
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.scale_loss")
    assert amp and set(amp.values()) == {"info"}, amp


def test_a_method_handed_on_keeps_its_findings(tmp_path):
    run = _EVAL + "hooks = [model.do_train]\n"
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": run, "train.py": _TRAIN})
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.scale_loss")
    assert amp and "info" not in amp.values(), amp


def test_a_method_spelled_as_a_string_keeps_its_findings(tmp_path):
    run = _EVAL + "getattr(model, 'parallel')()\n"
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": run})
    dp = severity_at(found, _MODEL, _WRAPPER, "torch.nn.DataParallel")
    assert dp and "info" not in dp.values(), dp


def test_a_ray_style_method_step_keeps_its_findings(tmp_path):
    # `actor.do_train.remote(...)`: a step of a path rooted at a variable, not a module, is a call of the method
    run = _EVAL + "ref = model.do_train.remote([], None)\n"
    found = dedented_tree(tmp_path, {_MODEL: _WRAPPER, "evaluation/run_eval.py": run})
    amp = severity_at(found, _MODEL, _WRAPPER, "amp.scale_loss")
    assert amp and "info" not in amp.values(), amp
