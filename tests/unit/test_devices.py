import pytest

from jupyterlab_vram_helper.devices import (
    enumerate_devices,
    normalize_uuid,
    parse_visible_devices,
    visible_nvml_devices,
)
from jupyterlab_vram_helper.readers.nvml import NvmlDevice


def nv(n: int) -> list:
    return [NvmlDevice(i, f"GPU-{i}{i}{i}-{i}", f"gpu{i}", (i + 1) << 30, object()) for i in range(n)]


@pytest.mark.parametrize(
    "value,expected",
    [
        (None, None),
        ("", []),
        ("0,1", [0, 1]),
        (" 2 , 0 ", [2, 0]),
        ("1gpu,3", [1, 3]),
        ("1,-1,2", [1]),
        ("1,x,2", [1]),
        ("1,1", []),
        ("GPU-abc,GPU-def", ["GPU-abc", "GPU-def"]),
        ("GPU-abc,0", ["GPU-abc"]),
        ("GPU-abc,GPU-abc", []),
        ("MIG-xyz", ["MIG-xyz"]),
    ],
)
def test_parse_visible_devices_like_cuda(value, expected) -> None:
    assert parse_visible_devices(value) == expected


def test_ordinals_reorder_and_filter() -> None:
    devices = nv(4)
    assert [d.nvml_index for d in visible_nvml_devices([2, 0], devices)] == [2, 0]
    assert [d.nvml_index for d in visible_nvml_devices([1, 7, 2], devices)] == [1]  # invalid stops
    assert visible_nvml_devices([], devices) == []
    assert visible_nvml_devices(None, devices) == devices


def test_uuid_prefixes() -> None:
    devices = nv(3)
    assert [d.nvml_index for d in visible_nvml_devices(["GPU-222", "GPU-000-0"], devices)] == [2, 0]
    # "GPU-" alone matches all three: ambiguous, so CUDA stops there.
    assert visible_nvml_devices(["GPU-"], devices) == []
    assert visible_nvml_devices(["GPU-999"], devices) == []
    assert visible_nvml_devices(["MIG-1"], devices) == []


def test_before_cuda_init_devices_come_from_nvml_renumbered() -> None:
    devices = enumerate_devices(None, nv(4), {"CUDA_VISIBLE_DEVICES": "3,1"})
    assert [(d.index, d.name, d.total_bytes, d.uuid) for d in devices] == [
        (0, "gpu3", 4 << 30, "GPU-333-3"),
        (1, "gpu1", 2 << 30, "GPU-111-1"),
    ]
    assert devices[0].nvml is not None and devices[0].nvml.nvml_index == 3


def test_after_cuda_init_devices_come_from_torch_matched_by_uuid(fake_torch, two_gpus) -> None:
    from jupyterlab_vram_helper.readers.nvml import NvmlDevice as D

    nvml = [D(i, g.uuid, g.name, g.total, g) for i, g in enumerate(two_gpus)]
    # torch only sees the second GPU (CUDA_VISIBLE_DEVICES=1 at its init)
    fake_torch.cuda.device_count = lambda: 1
    props = fake_torch.cuda.get_device_properties
    fake_torch.cuda.get_device_properties = lambda i: props(i + 1)
    fake_torch.initialized = True
    devices = enumerate_devices(fake_torch, nvml, {})
    assert len(devices) == 1
    assert devices[0].index == 0 and devices[0].uuid == "GPU-bbbb-2222"
    assert devices[0].nvml is nvml[1]


def test_torch_not_initialized_means_nvml_even_if_imported(fake_torch) -> None:
    devices = enumerate_devices(fake_torch, nv(2), {})
    assert [d.name for d in devices] == ["gpu0", "gpu1"]
    assert fake_torch.calls == []  # no torch.cuda call at all


def test_normalize_uuid() -> None:
    assert normalize_uuid("abcd") == "GPU-abcd"
    assert normalize_uuid("GPU-abcd") == "GPU-abcd"
    assert normalize_uuid("MIG-x") == "MIG-x"
    assert normalize_uuid("") is None and normalize_uuid(None) is None
