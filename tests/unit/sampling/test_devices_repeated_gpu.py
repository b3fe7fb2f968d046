"""CUDA_VISIBLE_DEVICES naming one GPU twice under two spellings of its UUID.

CUDA resolves each (partial) UUID to a device and hides every device when one
comes twice; PyTorch's own model of it (torch.cuda._transform_uuid_to_ordinals,
checked against a 525 driver) returns no ordinal for
"GPU-9e8d35e3,GPU-47,GPU-9e8". The repeated string is caught while parsing;
a repeat that shows only once the prefixes are resolved must hide them too.
"""

import pytest
from fakes import FakeGpu, FakePynvml

from jupyterlab_vram_helper.comm.hello import hello_message
from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.devices import enumerate_devices, parse_visible_devices, visible_nvml_devices
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlDevice, NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource

UUIDS = [
    "GPU-9942190a-aa31-4ff1-4aa9-c388d80f85f1",
    "GPU-9e8d35e3-a134-0fdd-0e01-23811fdbd293",
    "GPU-e429a63e-c61c-4795-b757-5132caeb8e70",
    "GPU-eee1dfbc-0a0f-6ad8-5ff6-dc942a8b9d98",
    "GPU-bbcd6503-5150-4e92-c266-97cc4390d04e",
    "GPU-472ea263-58d7-410d-cc82-f7fdece5bd28",
]


def nvml_devices() -> list:
    return [NvmlDevice(i, u, "NVIDIA A100", 40 << 30, object()) for i, u in enumerate(UUIDS)]


@pytest.mark.parametrize(
    "value",
    [
        "GPU-9e8d35e3,GPU-47,GPU-9e8",  # PyTorch's own case
        "GPU-9e8d35e3,GPU-9e8d35e3-a134-0fdd-0e01-23811fdbd293",  # a prefix, then the full UUID
        "GPU-472ea263-58d7-410d-cc82-f7fdece5bd28,GPU-47",
    ],
)
def test_one_gpu_named_twice_hides_every_gpu(value: str) -> None:
    assert enumerate_devices(None, nvml_devices(), {"CUDA_VISIBLE_DEVICES": value}) == []


def test_an_invalid_entry_still_stops_the_list_before_a_repeat() -> None:
    # CUDA stops at the first entry it cannot resolve: a repeat after it is never reached.
    visible = parse_visible_devices("GPU-9e8d35e3,GPU-123,GPU-9e8")
    assert [d.nvml_index for d in visible_nvml_devices(visible, nvml_devices())] == [1]
    # An ambiguous prefix ("GPU-e" names two GPUs) stops it the same way.
    visible = parse_visible_devices("GPU-9e8d35e3,GPU-e,GPU-9e8")
    assert [d.nvml_index for d in visible_nvml_devices(visible, nvml_devices())] == [1]


def test_the_panel_says_what_hides_the_gpus() -> None:
    gpus = [FakeGpu(u, "NVIDIA A100", 40 << 30, 0) for u in UUIDS[:2]]
    nvml = NvmlReader(pid=77, load=lambda: FakePynvml(gpus), pid_exists=lambda p: True)
    nvml.start()
    value = "GPU-9e8d35e3,GPU-9e8"
    source = SampleSource(nvml=nvml, environ={"CUDA_VISIBLE_DEVICES": value})
    hidden = {"count": 2, "cuda_visible_devices": value}
    assert hello_message(source, SamplerConfig())["hidden_gpus"] == hidden
    figures = source.read()
    assert figures["gpus"] == [] and figures["hidden_gpus"] == hidden
