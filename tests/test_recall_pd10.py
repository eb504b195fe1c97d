"""pd10 (session 17): Horovod (NPU144) is a package finding in Horovod's own tree, and a literal `libraries` list
names its CUDA math libraries (NPU805) beside the build call's own finding."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from auditor.static.firstparty import is_first_party

ENGINE = StaticEngine(load_rules())


def test_horovod_use_is_reported_but_not_in_horovods_own_tree():
    src = b"import horovod.torch as hvd\n\nhvd.init()\nrank = hvd.rank()\n"
    found = [f for f in ENGINE.analyze_bytes(src, "train.py").findings if f.code == "NPU144"]
    assert sorted({f.line for f in found}) == [1, 3, 4]
    assert all(is_first_party(f, frozenset({"horovod"})) for f in found)
    assert not any(is_first_party(f, frozenset({"laion_clap"})) for f in found)


def test_libraries_list_inside_a_cuda_extension_call_is_its_own_finding():
    src = (b"from torch.utils.cpp_extension import CUDAExtension\n\n"
           b"ext = CUDAExtension(\n    name='lu',\n    sources=['lu.cpp'],\n    libraries=['cusolver', 'cusparse'],\n)\n"
           b"host = CUDAExtension('m', sources=['m.cpp'], libraries=['m', extra])\n")
    found = ENGINE.analyze_bytes(src, "setup.py").findings
    assert [f.line for f in found if f.code == "NPU805"] == [6]
    assert any(f.code == "NPU370" for f in found)


def test_horovod_module_named_on_its_own_is_not_a_use():
    # t18a: autogluon / LAVIS `assert hvd is not None`, deepmd-kit's `self._HVD = HVD`, `if not self._HVD`, a log
    # message and the flag `self.is_distrib = HVD.size() > 1` read later: only the import and the calls change
    src = (b"try:\n    import horovod.torch as HVD\nexcept ImportError:\n    HVD = None\n\n\n"
           b"class RunOptions:\n"
           b"    def setup(self):\n"
           b"        assert HVD is not None\n"
           b"        HVD.init()\n"
           b"        self.is_distrib = HVD.size() > 1\n"
           b"        if self.is_distrib:\n"
           b"            self._HVD = HVD\n"
           b"            self._init_distributed(HVD)\n"
           b"        if not self._HVD:\n"
           b"            log.info(f\"rank {HVD.rank()} {self._HVD}\")\n")
    found = [f for f in ENGINE.analyze_bytes(src, "run_options.py").findings if f.code == "NPU144"]
    assert sorted({f.line for f in found}) == [2, 10, 11, 16]


def test_horovod_for_another_framework_is_not_reported():
    # deepxde's `tensorflow.compat.v1` backend: not a PyTorch code path (t18a)
    src = b"import horovod.tensorflow as hvd\nfrom horovod.keras import callbacks\n\nhvd.init()\nrank = hvd.rank()\n"
    assert not [f for f in ENGINE.analyze_bytes(src, "config.py").findings if f.code == "NPU144"]
