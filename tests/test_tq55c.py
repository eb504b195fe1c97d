"""tq55c (precision bench, session 55; TUNED on heldout73 trees 1-4): torch's global seed spelled through an import
alias (`import torch as th; th.random.manual_seed(seed)`), ... Trees modelled on the projects' files, each with a
positive and a quiet control."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

SEED_ALIASED = '''
    import random

    import numpy as np
    import torch as th


    def set_seed(seed_str):
        if not seed_str or seed_str == "none":
            return None
        seed = int(seed_str)
        random.seed(seed)
        np.random.seed(seed)
        th.random.manual_seed(seed)
        th.cuda.manual_seed_all(seed)
        return seed
'''

SEED_CUDA_ONLY = '''
    import random

    import torch as th


    def set_seed(seed):
        random.seed(seed)
        th.cuda.manual_seed_all(seed)
        return seed
'''


def test_cuda_reseed_after_aliased_global_seed_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"speech/utils.py": SEED_ALIASED})
    assert severity_at(found, "speech/utils.py", SEED_ALIASED, "th.cuda.manual_seed_all").get("NPU002") == "info"


def test_cuda_seed_alone_under_an_alias_keeps_its_severity(tmp_path):
    found = dedented_tree(tmp_path, {"speech/utils.py": SEED_CUDA_ONLY})
    assert severity_at(found, "speech/utils.py", SEED_CUDA_ONLY, "th.cuda.manual_seed_all").get("NPU002") == "error"
