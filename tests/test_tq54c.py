"""tq54c (session 54; TUNED on heldout68 / heldout69): defaults every caller overrides through a subclass's
`super().__init__(...)`, and the other shapes below. Each shape on code like the trees it came from, beside a control
that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at


def _at(root, rel: str, src: str, needle: str) -> dict[str, str]:
    """code -> severity on the line of `src` (written alone at `rel` under `root`) where `needle` first occurs."""
    return severity_at(dedented_tree(root, {rel: src}), rel, src, needle)

# a retrieval toolkit's CLIP encoders: the base's default is handed on by the subclass's own `__init__`
_CLIP = """
    import torch
    from transformers import CLIPModel


    class BaseClipEncoder:
        def __init__(self, model_name, device='cuda:0', l2_norm=True):
            self.device = device
            self.model = CLIPModel.from_pretrained(model_name).to(device)


    class ClipImageEncoder(BaseClipEncoder):
        def encode(self, pixels):
            return self.model.get_image_features(pixel_values=pixels.to(self.device))


    class ClipTextEncoder(BaseClipEncoder):
        def __init__(self, model_name, device='cuda:0', l2_norm=False, prefix=None):
            super().__init__(model_name, device, l2_norm)
            self.prefix = prefix


    class ClipDocumentEncoder:
        def __init__(self, model_name, device='cuda:0', multimodal=False):
            if multimodal:
                self.encoder = ClipImageEncoder(model_name, device)
            else:
                self.encoder = ClipTextEncoder(model_name, device)
"""
_CLIP_CLI = """
    from encoders.clip import ClipDocumentEncoder


    def main(args):
        return ClipDocumentEncoder(args.model, args.device)
"""


def test_base_default_handed_on_by_a_subclass_init_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"encoders/clip.py": _CLIP, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", _CLIP, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "info"


def test_base_default_a_subclass_init_lets_through_keeps_its_severity(tmp_path):
    src = _CLIP.replace("super().__init__(model_name, device, l2_norm)", "super().__init__(model_name)")
    found = dedented_tree(tmp_path, {"encoders/clip.py": src, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", src, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "error"


def test_base_called_through_super_outside_init_stays_unknown(tmp_path):
    src = _CLIP.replace("super().__init__(model_name, device, l2_norm)\n",
                        "self.reset(model_name, device)\n\n        def reset(self, model_name, device):\n"
                        "            super().__init__(model_name, device)\n")
    found = dedented_tree(tmp_path, {"encoders/clip.py": src, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", src, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "error"


# a Ray transfer benchmark-test: a module-level table of shapes and dtypes, host tensors shipped between actors
_RAY_TEST = """
    import ray
    import torch

    TEST_CONFIGS: list[tuple[tuple[int, int], torch.dtype]] = [
        ((5000, 5000), torch.float32),
        ((10000, 10000), torch.float16),
        ((20000, 20000), torch.float64),
    ]


    @ray.remote
    class WriterActor:
        def put(self, shape, dtype):
            return {"input_ids": torch.randn(*shape).to(dtype)}


    def main():
        writer = WriterActor.remote()
        for shape, dtype in TEST_CONFIGS:
            ray.get(writer.put.remote(shape, dtype))
"""


def test_dtype_table_of_a_test_module_that_names_no_device_is_a_host_value(tmp_path):
    found = dedented_tree(tmp_path, {"tests/test_ray_p2p.py": _RAY_TEST})
    assert "NPU208" not in severity_at(found, "tests/test_ray_p2p.py", _RAY_TEST, "torch.float64),")
    assert "NPU202" not in severity_at(found, "tests/test_ray_p2p.py", _RAY_TEST, "torch.float16),")


def test_dtype_table_of_a_test_module_that_places_tensors_keeps_its_findings(tmp_path):
    src = _RAY_TEST.replace("torch.randn(*shape).to(dtype)", "torch.randn(*shape, device='cuda').to(dtype)")
    found = dedented_tree(tmp_path, {"tests/test_ray_p2p.py": src})
    assert "NPU208" in severity_at(found, "tests/test_ray_p2p.py", src, "torch.float64),")
    # the same table outside a test module is the program's own choice
    found = dedented_tree(tmp_path / "lib", {"transfer/bench_configs.py": _RAY_TEST})
    assert "NPU208" in severity_at(found, "transfer/bench_configs.py", _RAY_TEST, "torch.float64),")


# a multimodal retriever's query encoder: embeddings normalised by faiss, then cast for a float16 index
_UNIIR = """
    import faiss


    class UniIRQueryEncoder:
        def encode(self, qid, query_txt, fp16=False):
            query_embeddings = self.query_encoder.encode_batch(qids=[qid], query_txts=[query_txt], fp16=fp16)
            if self.l2_norm:
                query_embeddings = query_embeddings.astype('float32')
                faiss.normalize_L2(query_embeddings)
                query_embeddings = query_embeddings.astype('float16') if fp16 else query_embeddings
            return query_embeddings
"""


def test_astype_of_an_array_handed_to_faiss_is_a_host_value(tmp_path):
    assert "NPU202" not in _at(tmp_path, "retrieval/encode/uniir.py", _UNIIR, "astype('float16')")


def test_astype_of_an_array_faiss_never_sees_keeps_its_finding(tmp_path):
    src = _UNIIR.replace("faiss.normalize_L2(query_embeddings)", "faiss.omp_set_num_threads(4)")
    assert "NPU202" in _at(tmp_path, "retrieval/encode/uniir.py", src, "astype('float16')")


# a learned-sparse encoder: the router's top-k outputs copied to the host, then read one by one into term weights
_SLIM = """
    import torch


    class SlimQueryEncoder:
        def encode(self, inputs, topk=20):
            logits = self.model(**inputs, return_dict=True).logits[:, 1:, :]
            attention_mask = inputs["attention_mask"][:, 1:]
            expert_weights, expert_ids = torch.topk(torch.relu(logits), dim=2, k=topk)
            return self._output_to_weight_dicts(expert_weights.cpu(), expert_ids.cpu(), attention_mask.cpu())[0]

        def _output_to_weight_dicts(self, batch_expert_weights, batch_expert_ids, batch_attention):
            to_return = []
            for batch_id in range(len(batch_expert_ids)):
                vector = {}
                for position, (topk_ids, topk_weights, score) in enumerate(zip(batch_expert_ids[batch_id],
                                                                              batch_expert_weights[batch_id],
                                                                              batch_attention[batch_id])):
                    if score > 0:
                        for expert_id, expert_weight in zip(topk_ids, topk_weights):
                            term, weight = self.reverse_vocab[expert_id.item()], expert_weight.item()
                            vector[term] = vector.get(term, 0) + weight
                to_return.append(vector)
            return to_return
"""


def test_item_on_rows_of_tensors_every_caller_copies_to_the_host_is_quiet(tmp_path):
    assert "NPU703" not in _at(tmp_path, "retrieval/encode/slim.py", _SLIM, "expert_id.item()")


def test_item_on_rows_of_tensors_a_caller_leaves_on_the_device_keeps_its_finding(tmp_path):
    src = _SLIM.replace("expert_ids.cpu(), attention_mask", "expert_ids, attention_mask")
    assert "NPU703" in _at(tmp_path, "retrieval/encode/slim.py", src, "expert_id.item()")


_GDR_TESTS = """
    import importlib.util

    import pytest
    import torch

    _has_cuda_python = importlib.util.find_spec("cuda") is not None
    _has_bindings = importlib.util.find_spec("cuda.bindings") is not None


    @pytest.mark.skipif(not (_has_cuda_python and torch.cuda.is_available()), reason="needs CUDA")
    def test_staging_roundtrip():
        t = torch.ones(4, device="cuda")
        assert t.sum().item() == 4
"""


def test_cuda_python_looked_up_by_module_name_is_no_device_string(tmp_path):
    found = dedented_tree(tmp_path, {"tests/test_gdr.py": _GDR_TESTS})
    assert "NPU003" not in severity_at(found, "tests/test_gdr.py", _GDR_TESTS, 'find_spec("cuda")')
    assert "NPU003" not in severity_at(found, "tests/test_gdr.py", _GDR_TESTS, 'find_spec("cuda.bindings")')
    # the device string of the test itself stays
    assert "NPU003" in severity_at(found, "tests/test_gdr.py", _GDR_TESTS, 'device="cuda"')


# a storage benchmark's Ray reader: the H2D step runs only when the user picked `--device gpu`
_PERFTEST = """
    import ray
    import torch


    @ray.remote
    class ClientActor:
        def get_data(self, partition_id, keys=None, move_to_gpu: bool = False):
            result = fetch(keys=keys, partition_id=partition_id)
            if move_to_gpu:
                tensors = [v for v in result.values() if torch.is_tensor(v)]
                torch.cuda.synchronize()
                for t in tensors:
                    t.to(0)
                torch.cuda.synchronize()


    class Tester:
        def __init__(self, device):
            self.device = device
            self.reader = ClientActor.remote()

        def run(self, partition_id, keys):
            move_to_gpu = self.device == "gpu"
            ray.get(self.reader.get_data.remote(partition_id=partition_id, keys=keys, move_to_gpu=move_to_gpu))
"""


def test_flag_every_call_sets_from_a_cuda_choice_gates_its_branch(tmp_path):
    assert _at(tmp_path, "scripts/perftest.py", _PERFTEST, "torch.cuda.synchronize()")["NPU002"] == "warning"


def test_flag_a_call_sets_from_anything_else_keeps_its_branch_an_error(tmp_path):
    src = _PERFTEST.replace('move_to_gpu = self.device == "gpu"', "move_to_gpu = self.move")
    assert _at(tmp_path, "scripts/perftest.py", src, "torch.cuda.synchronize()")["NPU002"] == "error"
    src = _PERFTEST + "\n    def warm(reader):\n        reader.get_data.remote('p', move_to_gpu=True)\n"
    assert _at(tmp_path / "b", "scripts/perftest.py", src, "torch.cuda.synchronize()")["NPU002"] == "error"


# a storage client's GPU-direct staging buffer, built only when CUDA is initialised; its lock is tested on any host
_STAGING = """
    import threading

    import torch


    class GdrStaging:
        def __init__(self, size):
            self._size = size
            self._lock = threading.Lock()
            self._stream = None

        def acquire(self):
            return self._lock

        def wait_for_current_stream(self):
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream())
            self._stream.wait_event(event)
"""
_CLIENT = """
    import torch

    from store.staging import GdrStaging


    class StoreClient:
        def __init__(self, config):
            eligible = config.get("use_gdr", False) and torch.cuda.is_initialized()
            self._staging: GdrStaging | None = GdrStaging(config["size"]) if eligible else None


    def make_client(config):
        return StoreClient(config)
"""
_LOCK_TEST = """
    from store.staging import GdrStaging


    class TestGdrStagingLock:
        def test_acquire(self):
            staging = GdrStaging(1024)
            with staging.acquire():
                pass
"""


def _staging_tree(tmp_path, client: str) -> dict:
    return dedented_tree(tmp_path, {"store/__init__.py": "", "store/staging.py": _STAGING, "store/client.py": client,
                                    "tests/test_staging.py": _LOCK_TEST})


def test_uncalled_method_of_a_class_built_only_behind_a_cuda_gate_is_a_warning(tmp_path):
    found = _staging_tree(tmp_path, _CLIENT)
    assert severity_at(found, "store/staging.py", _STAGING, "torch.cuda.Event()")["NPU014"] == "warning"


def test_uncalled_method_of_a_class_built_without_a_gate_keeps_its_error(tmp_path):
    client = _CLIENT.replace("GdrStaging(config[\"size\"]) if eligible else None", "GdrStaging(config[\"size\"])")
    found = _staging_tree(tmp_path, client)
    assert severity_at(found, "store/staging.py", _STAGING, "torch.cuda.Event()")["NPU014"] == "error"


_RT = """
    from typing import Any


    class GdrStaging:
        def __init__(self):
            self._rt: Any = None

        def lazy_init(self):
            try:
                from cuda.bindings import runtime as cudart
            except ImportError:
                from cuda import cudart
            self._rt = cudart

        def memcpy_async(self, dst, src, nbytes):
            rt = self._rt
            return rt.cudaMemcpyAsync(dst, src, nbytes)
"""


def test_an_attribute_declared_with_an_annotation_is_no_use_of_the_module_it_holds_later(tmp_path):
    assert "NPU408" not in _at(tmp_path, "store/staging.py", _RT, "self._rt: Any = None")
    assert "NPU408" in _at(tmp_path, "store/staging.py", _RT, "rt = self._rt")     # the read is the use


_CI = """
    name: Python package
    on: [push]
    jobs:
      build:
        runs-on: ubuntu-latest
        steps:
        - name: Install dependencies
          run: |
            pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu
            pip install mooncake-transfer-engine-non-cuda
            pip install kaldifeat-cuda
"""


def test_a_distribution_named_for_its_build_without_cuda_is_no_cuda_dependency(tmp_path):
    found = dedented_tree(tmp_path, {".github/workflows/python-package.yml": _CI})
    rel = ".github/workflows/python-package.yml"
    assert "NPU440" not in severity_at(found, rel, _CI, "mooncake-transfer-engine-non-cuda")
    assert "NPU440" in severity_at(found, rel, _CI, "kaldifeat-cuda")      # named for its CUDA build
