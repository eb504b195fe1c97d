"""veRL's DataProto keeps its non-tensor fields in `non_tensor_batch`, a dict of numpy object arrays (t33c, session 33;
dev33's TinyZero `verl/workers/fsdp_workers.py`, and the veRL copies code search finds): `.tolist()` on an entry in a
loop moves nothing from a device (policy (e)); the tensor batch beside it keeps the hint."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

WORKER = """\
    import torch


    class RewardModelWorker:
        def _switch_chat_template(self, data):
            rm_input_ids = []
            for i in range(data.batch.batch_size[0]):
                chat: list = data.non_tensor_batch['raw_prompt'][i].tolist()
                response_ids = data.batch['responses'][i]
                valid_response_length = data.batch['attention_mask'][i].sum().item()
                rm_input_ids.append((chat, response_ids[:valid_response_length]))
            return rm_input_ids

        def compute_rm_score(self, data):
            data = data.to(torch.cuda.current_device())
            return self._switch_chat_template(data)

        def _sources(self, data):
            non_tensor = data.non_tensor_batch
            return [non_tensor['data_source'][i].item() for i in range(len(data))]
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_non_tensor_entries_are_host_values(engine):
    found = codes_by_line(engine, WORKER, "verl/workers/fsdp_workers.py")
    assert "NPU703" not in found.get(line_of(WORKER, "non_tensor_batch['raw_prompt'][i].tolist()"), set())
    assert "NPU703" not in found.get(line_of(WORKER, "non_tensor['data_source'][i].item()"), set())


def test_the_tensor_batch_keeps_the_hint(engine):
    found = codes_by_line(engine, WORKER, "verl/workers/fsdp_workers.py")
    assert "NPU703" in found.get(line_of(WORKER, "data.batch['attention_mask'][i].sum().item()"), set())
