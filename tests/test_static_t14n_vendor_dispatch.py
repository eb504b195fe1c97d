"""NPU076 (a CUDA / NVIDIA vendor literal compared) in a vendor dispatch that already has an Ascend arm, and in
database migrations that rewrite stored vendor data (t14n, issue 11; the class came from deeplink.framework's DIPU
and gpustack's alembic revisions, read on the precision trees). The snippets are written in the shape of a
multi-vendor device runtime, a hardware inventory service and a benchmark driver, not copied from those trees."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import findings_by_line, findings_in_tree, write_tree

ENGINE = StaticEngine(load_rules())


def _vendor(src: str, rel: str = "runtime/device.py") -> dict[int, str]:
    """{line: severity} of the NPU076 findings on `src` read as `rel`."""
    return {line: f.severity for line, fs in findings_by_line(ENGINE, src, rel).items() for f in fs
            if f.code == "NPU076"}


RUNTIME = '''\
import torch
from . import _C as runtime


def bf16_supported():
    if runtime.vendor_type == "NPU":
        return True
    return False


def patch_autocast():
    # the CUDA build keeps torch's own answer (compute capability); the other vendors get ours
    if runtime.vendor_type != "CUDA":
        torch.cuda.is_bf16_supported = bf16_supported


def capturing_graph():
    if runtime.vendor_type.upper() == "CUDA":
        return torch.cuda.is_current_stream_capturing()
    return False
'''


def test_vendor_value_compared_with_npu_elsewhere_in_the_file_is_info():
    found = _vendor(RUNTIME)
    assert found == {13: "info", 18: "info"}


SCHEDULER = '''\
def pick_kernel(vendor):
    if vendor == "NVIDIA":
        return "cutlass"
    elif vendor == "Huawei":
        return "aclnn"
    return "reference"


def memory_fraction(vendor):
    if vendor == "NVIDIA":
        return 0.9
    return 0.8


def launch(accel):
    match accel.vendor:
        case "Ascend":
            return "hccl"
        case _:
            return "gloo"


def pin_memory(accel):
    return accel.vendor == "NVIDIA"
'''


def test_bare_names_are_one_value_only_inside_one_function():
    found = _vendor(SCHEDULER, "scheduler/kernels.py")
    # the Huawei arm belongs to pick_kernel; memory_fraction's `vendor` is another parameter: still a warning;
    # `accel.vendor` is matched against "Ascend" in launch(): pin_memory's comparison is beside that arm
    assert found == {2: "info", 10: "warning", 24: "info"}


BENCH_DRIVER = '''\
import torch


def set_tf32(vendor, enabled):
    if vendor == "nvidia":
        torch.backends.cuda.matmul.allow_tf32 = enabled
    elif "cambricon" in vendor:
        torch.backends.mlu.matmul.allow_tf32 = enabled
    else:
        print("unspecified vendor {}, do nothing".format(vendor))
'''


def test_dispatch_without_an_ascend_arm_keeps_its_warning():
    assert _vendor(BENCH_DRIVER, "benchmarks/drivers/utils.py") == {5: "warning"}


ALEMBIC = '''\
"""add accelerator vendor to workers

Revision ID: 3c1f0a9d2b7e
"""
import sqlalchemy as sa
from alembic import op

revision = "3c1f0a9d2b7e"
down_revision = "9a0e44c1d5f2"


def upgrade():
    op.add_column("workers", sa.Column("gpu_vendor", sa.String(), nullable=True))
    conn = op.get_bind()
    for worker_id, devices in conn.execute(sa.text("SELECT id, devices FROM workers")):
        vendor = (devices or [{}])[0].get("vendor")
        if vendor == "NVIDIA":
            conn.execute(sa.text("UPDATE workers SET gpu_vendor = 'nvidia' WHERE id = :id"), {"id": worker_id})


def downgrade():
    op.drop_column("workers", "gpu_vendor")
'''

DJANGO = '''\
from django.db import migrations


def backfill_vendor(apps, schema_editor):
    Gpu = apps.get_model("inventory", "Gpu")
    for gpu in Gpu.objects.all():
        if "nvidia" in gpu.model_name.lower():
            gpu.vendor = "NVIDIA"
            gpu.save(update_fields=["vendor"])


class Migration(migrations.Migration):
    dependencies = [("inventory", "0007_gpu_vendor")]
    operations = [migrations.RunPython(backfill_vendor, migrations.RunPython.noop)]
'''


def test_database_migrations_select_no_device():
    assert _vendor(ALEMBIC, "service/migrations/versions/2025_01_07-3c1f0a9d2b7e_worker_vendor.py") == {}
    assert _vendor(DJANGO, "inventory/migrations/0008_backfill_vendor.py") == {}
    # the same data loop in ordinary service code chooses a branch: still reported
    service = ALEMBIC.replace("def downgrade():", "def rollback():")
    assert _vendor(service, "service/workers.py") == {17: "warning"}


def test_vendor_value_compared_with_npu_in_another_file_of_the_tree(tmp_path):
    root = write_tree(tmp_path, {
        "vendorrt/runtime/amp.py": '''\
            from vendorrt.runtime import device as rt


            def bf16_supported():
                return rt.vendor_type == "NPU"
            ''',
        "vendorrt/tests/base.py": '''\
            from vendorrt.runtime import device as rt

            if rt.vendor_type == "MLU":
                from tests.config_mlu import DISABLED_TESTS
            elif rt.vendor_type == "CUDA":
                from tests.config_cuda import DISABLED_TESTS
            ''',
        "tools/report.py": '''\
            def header(vendor_type):
                if vendor_type == "CUDA":
                    return "GPU"
                return "accelerator"
            ''',
    })
    found = {(path, line): sev for (path, line, code), sev in findings_in_tree(root).items() if code == "NPU076"}
    assert found == {("vendorrt/tests/base.py", 5): "info", ("tools/report.py", 2): "warning"}


def test_a_single_attribute_or_self_chain_is_not_the_same_value_across_the_tree(tmp_path):
    root = write_tree(tmp_path, {
        "prof/events.py": '''\
            def npu_events(prof):
                return [e for e in prof.events() if e.device_type().name == "NPU"]


            class AscendCard:
                def is_ours(self):
                    return self.vendor == "Ascend"
            ''',
        "prof/timing.py": '''\
            def gpu_time(prof):
                return sum(e.self_device_time_total for e in prof.events() if e.device_type().name == "CUDA")


            class Card:
                def tensor_cores(self):
                    return self.vendor == "NVIDIA"
            ''',
    })
    found = {(path, line): sev for (path, line, code), sev in findings_in_tree(root).items() if code == "NPU076"}
    assert found == {("prof/timing.py", 2): "warning", ("prof/timing.py", 7): "warning"}
