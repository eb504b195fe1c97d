"""hq39 (session 39, issue 11; TUNED on heldout30..heldout41): the host-sync hint NPU703 needs positive evidence that
the receiver of `.item()` / `.tolist()` is a device value (auditor/static/device_values.py). Code written afresh in
the shape of the held-out rows: training steps whose losses come from a criterion or a model, GAN discriminator
losses, a GradScaler's scale, beam search on a model's outputs, a class whose caller moves the batch; and the host
side the old negative reading missed: metrics on strings, an OCR wrapper's numpy boxes in a web endpoint, a
DataLoader batch read in a host script, a helper whose parameter nothing shows on a device."""
from __future__ import annotations

import ast

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from auditor.static.device_values import DeviceReader, device_work, sync_receivers
from tests.static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _hinted(engine, src: str, needle: str, rel: str = "pkg/train.py") -> bool:
    return "NPU703" in codes_by_line(engine, src, rel).get(line_of(src, needle), set())


TRAIN = """\
    import torch
    import torch.nn.functional as F


    def train_epoch(model, loader, optimizer, scaler, device):
        total_loss = 0.0
        for step, batch in enumerate(loader):
            inputs = batch["x"].to(device)
            out = model(inputs)
            loss = F.cross_entropy(out, batch["y"].to(device))
            scaler.scale(loss).backward()
            total_loss += loss.item()
            grad_scale = scaler._scale.item()
        return total_loss


    def discriminator_loss(disc_real_outputs, disc_generated_outputs):
        loss = 0
        r_losses = []
        for dr, dg in zip(disc_real_outputs, disc_generated_outputs):
            r_loss = torch.mean((1 - dr) ** 2)
            loss += r_loss
            r_losses.append(r_loss.item())
        return loss, r_losses


    def beam_step(model, input_ids, beams):
        logits = model(input_ids).logits
        probs = logits[:, -1].softmax(-1)
        scores = []
        for b in range(beams):
            scores.append(probs[b, 0].float().item())
        return scores
    """


@pytest.mark.parametrize("needle", ["total_loss += loss.item()", "grad_scale = scaler._scale.item()",
                                    "r_losses.append(r_loss.item())", "scores.append(probs[b, 0].float().item())"])
def test_device_values_keep_the_hint(engine, needle):
    assert _hinted(engine, TRAIN, needle)


WORKER = """\
    import torch


    class RewardWorker:
        def compute_scores(self, data):
            data = data.to(torch.cuda.current_device())
            return self._per_sample(data)

        def _per_sample(self, data):
            out = []
            for i in range(len(data)):
                out.append(data.batch["attention_mask"][i].sum().item())
            return out
    """


def test_a_method_parameter_its_class_passes_a_device_value_keeps_the_hint(engine):
    assert _hinted(engine, WORKER, 'out.append(data.batch["attention_mask"][i].sum().item())')


def test_a_helper_given_the_device_by_position_makes_device_values(engine):
    # moment_detr's inference loop: `prepare_batch_inputs(batch[1], opt.device)` moves the batch
    src = """\
    import torch


    def compute_scores(model, eval_loader, opt):
        for batch in eval_loader:
            model_inputs, targets = prepare_batch_inputs(batch[1], opt.device, non_blocking=opt.pin_memory)
            outputs = model(**model_inputs)
            valid_vid_lengths = model_inputs["src_vid_mask"].sum(1).cpu().tolist()
            print(outputs["pred_spans"], valid_vid_lengths)
    """
    assert _hinted(engine, src, 'valid_vid_lengths = model_inputs["src_vid_mask"].sum(1).cpu().tolist()',
                   "moment_detr/inference.py")


def test_a_same_file_function_returning_a_device_value_keeps_the_hint(engine):
    src = """\
    import torch


    def embed(model, texts, device):
        feats = model.encode(texts).to(device)
        return feats / feats.norm(dim=-1, keepdim=True)


    def best_matches(model, queries, corpus, device):
        corpus_emb = embed(model, corpus, device)
        out = []
        for q in queries:
            sims = embed(model, [q], device) @ corpus_emb.T
            out.append(sims.argmax().item())
        return out
    """
    assert _hinted(engine, src, "out.append(sims.argmax().item())")


HOST = """\
    import torch
    from torchmetrics.functional.text import char_error_rate


    def calculate_cer_batch(preds, gts):
        cers = []
        for pred, gt in zip(preds, gts):
            cer = char_error_rate([pred], [gt])
            cers.append(float(cer.item()))
        return cers


    def collect(loader):
        dates = []
        for batch in loader:
            dates.append(batch["datetime"].item())
        return dates


    def summarise(results):
        for r in results:
            print(r["score"].max().item(), r["boxes"].tolist())
    """


@pytest.mark.parametrize("needle", ["cers.append(float(cer.item()))", 'dates.append(batch["datetime"].item())',
                                    'print(r["score"].max().item(), r["boxes"].tolist())'])
def test_values_without_a_device_origin_have_no_hint(engine, needle):
    assert not _hinted(engine, HOST, needle, "pkg/metrics.py")


def test_a_wrapper_method_in_a_host_endpoint_is_no_device_value(engine):
    # CnOCR's serve.py: `OCR_MODEL.ocr(image)` returns dicts of numpy boxes; nothing in the endpoint does device work
    src = """\
    from cnocr import CnOcr

    OCR_MODEL = CnOcr()


    async def ocr(image):
        res = OCR_MODEL.ocr(image)
        for one in res:
            one["position"] = one["position"].tolist()
        return res
    """
    assert not _hinted(engine, src, 'one["position"] = one["position"].tolist()', "cnocr/serve.py")


def test_a_model_method_in_a_device_working_function_is_a_device_value(engine):
    # rllte's DAAC.update: `self.policy.evaluate_actions(...)` in a step that runs backward
    src = """\
    import torch


    class DAAC:
        def update(self, storage):
            losses = []
            for batch in storage.sample():
                _, _, log_probs, entropy = self.policy.evaluate_actions(batch.obs, batch.actions)
                loss = -(log_probs * batch.adv).mean() - 0.01 * entropy
                loss.backward()
                losses.append(entropy.item())
            return losses
    """
    assert _hinted(engine, src, "losses.append(entropy.item())", "rllte/agent/daac.py")


def test_a_locally_bound_host_value_in_a_device_working_function_has_no_hint(engine):
    # dream-textures' validate: the label comes straight from the dataset, only the input is moved
    src = """\
    import torch


    def validate(model, dataset, device):
        correct = 0
        for data in dataset:
            tensor, expected_result = data[1], data[0]
            result = model(tensor.to(device))[0].item()
            if expected_result.item() == 1:
                correct += result > 0
        return correct
    """
    assert _hinted(engine, src, "result = model(tensor.to(device))[0].item()", "scripts/validate.py")
    assert not _hinted(engine, src, "if expected_result.item() == 1:", "scripts/validate.py")


def test_a_parameter_in_a_device_working_function_keeps_the_hint(engine):
    # qwen3-vl's get_rope_index: `input_ids` is the caller's device tensor; the function reads `.device`
    src = """\
    import torch


    def get_rope_index(input_ids, attention_mask):
        position_ids = torch.ones(3, input_ids.shape[0], input_ids.shape[1], device=input_ids.device)
        total_input_ids = input_ids
        for i, input_ids in enumerate(total_input_ids):
            input_ids = input_ids[attention_mask[i] == 1]
            tokens = input_ids.tolist()
            position_ids[..., i, : len(tokens)] = 1
        return position_ids
    """
    assert _hinted(engine, src, "tokens = input_ids.tolist()", "models/qwen3_vl/modeling.py")


def test_reader_units():
    tree = ast.parse("def f(x, device):\n    y = x.to(device)\n    for i in range(3):\n        y[i].item()\n"
                     "def g(x):\n    for v in x:\n        v.item()\n")
    reader = DeviceReader(tree)
    (r4,) = sync_receivers(tree, 4)
    (r7,) = sync_receivers(tree, 7)
    assert reader.receiver_on_device(r4, 4) and not reader.receiver_on_device(r7, 7)
    assert device_work(tree.body[0]) and not device_work(tree.body[1])
    cast = ast.parse("def h(x):\n    y = x.to(torch.float32)\n    for i in range(3):\n        y[i].item()\n")
    (rc,) = sync_receivers(cast, 4)
    assert not DeviceReader(cast).receiver_on_device(rc, 4)     # a cast is no move
