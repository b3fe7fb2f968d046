import pytest

from jupyterlab_vram_helper.sampling.devices import (
    devices_wait_for_cuda,
    enumerate_devices,
    normalize_uuid,
    parse_visible_devices,
    visible_nvml_devices,
)
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlDevice


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
        ("0,\u00b9", [0]),  # a digit to str.isdigit(), not to CUDA (nor int())
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
    from jupyterlab_vram_helper.sampling.readers.nvml import NvmlDevice as D

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


@pytest.mark.parametrize(
    "value, waits",
    [
        ("MIG-5b3f1a2e-0c1d-5e6f-8a9b-0c1d2e3f4a5b", True),
        ("MIG-GPU-11111111-2222-3333-4444-555555555555/1/0", True),  # the pre-R470 form
        ("0,1", False),
        ("GPU-11111111", False),
        ("", False),
        (None, False),
    ],
)
def test_mig_instances_in_cuda_visible_devices_are_known_only_once_cuda_starts(value, waits) -> None:
    assert devices_wait_for_cuda(value) is waits
    if waits:
        # NVML lists parent GPUs only: before CUDA, no device can be named, and that is no proof of none.
        assert enumerate_devices(None, nv(2), {"CUDA_VISIBLE_DEVICES": value}) == []


def test_the_hello_says_whether_the_devices_wait_for_cuda() -> None:
    from jupyterlab_vram_helper.comm.hello import hello_message
    from jupyterlab_vram_helper.config import SamplerConfig
    from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
    from jupyterlab_vram_helper.sampling.sample import SampleSource

    def no_nvml():
        raise ImportError("no pynvml")

    mig = SampleSource(nvml=NvmlReader(load=no_nvml), environ={"CUDA_VISIBLE_DEVICES": "MIG-5b3f"})
    assert hello_message(mig, SamplerConfig())["devices_wait_for_cuda"] is True
    plain = SampleSource(nvml=NvmlReader(load=no_nvml), environ={})
    assert hello_message(plain, SamplerConfig())["devices_wait_for_cuda"] is False


@pytest.mark.parametrize("value", ["", "-1", "7", "GPU-nothere", "NoDevFiles"])
def test_a_cuda_visible_devices_that_hides_every_gpu_is_named_in_the_hello_and_samples(value: str) -> None:
    from fakes import FakeGpu, FakePynvml

    from jupyterlab_vram_helper.comm.hello import hello_message
    from jupyterlab_vram_helper.config import SamplerConfig
    from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
    from jupyterlab_vram_helper.sampling.sample import SampleSource

    gpus = [FakeGpu(f"GPU-{i}aaa", "NVIDIA H100", 80 << 30, 0) for i in range(2)]
    nvml = NvmlReader(pid=77, load=lambda: FakePynvml(gpus), pid_exists=lambda p: True)
    nvml.start()
    environ = {"CUDA_VISIBLE_DEVICES": value}
    source = SampleSource(nvml=nvml, environ=environ)

    hidden = {"count": 2, "cuda_visible_devices": value}
    assert hello_message(source, SamplerConfig())["hidden_gpus"] == hidden
    figures = source.read()
    assert figures["gpus"] == [] and figures["hidden_gpus"] == hidden
    # Tick after tick the same object: the change check settles it by identity.
    assert source.read()["hidden_gpus"] is figures["hidden_gpus"]


def test_gpus_not_hidden_when_some_are_visible_unset_or_mig_or_without_nvml() -> None:
    from fakes import FakeGpu, FakePynvml

    from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
    from jupyterlab_vram_helper.sampling.sample import SampleSource

    gpus = [FakeGpu(f"GPU-{i}aaa", "NVIDIA H100", 80 << 30, 0) for i in range(2)]

    def source(environ, load=None):
        nvml = NvmlReader(pid=77, load=load or (lambda: FakePynvml(gpus)), pid_exists=lambda p: True)
        nvml.start()
        return SampleSource(nvml=nvml, environ=environ)

    def no_nvml():
        raise ImportError("no pynvml")

    assert source({"CUDA_VISIBLE_DEVICES": "1"}).read()["hidden_gpus"] is None  # one of two: a choice
    assert source({}).read()["hidden_gpus"] is None
    assert source({"CUDA_VISIBLE_DEVICES": "MIG-5b3f"}).hidden_gpus() is None  # known once CUDA starts
    assert source({"CUDA_VISIBLE_DEVICES": ""}, no_nvml).hidden_gpus() is None  # nothing to say it hides
    assert source({"CUDA_VISIBLE_DEVICES": ""}, lambda: FakePynvml([])).hidden_gpus() is None  # no GPU at all


def test_a_cuda_visible_devices_set_in_a_cell_is_named_from_the_next_check() -> None:
    from fakes import FakeGpu, FakePynvml

    from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
    from jupyterlab_vram_helper.sampling.sample import ENVIRONMENT_CHECK_S, SampleSource

    now = [0.0]
    nvml = NvmlReader(
        pid=77, load=lambda: FakePynvml([FakeGpu("GPU-0aaa", "A100", 40 << 30, 0)]), pid_exists=lambda p: True
    )
    nvml.start()
    environ: dict = {}
    source = SampleSource(nvml=nvml, environ=environ, clock=lambda: now[0])
    assert source.read()["hidden_gpus"] is None and len(source.read()["gpus"]) == 1
    environ["CUDA_VISIBLE_DEVICES"] = ""  # os.environ["CUDA_VISIBLE_DEVICES"] = "" in a cell
    now[0] += ENVIRONMENT_CHECK_S
    figures = source.read()
    assert figures["gpus"] == [] and figures["hidden_gpus"] == {"count": 1, "cuda_visible_devices": ""}
