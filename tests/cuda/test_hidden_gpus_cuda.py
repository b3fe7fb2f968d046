"""A kernel whose CUDA_VISIBLE_DEVICES hides every GPU is told so, with the
value, in its hello and samples: the machine's GPUs (NVML lists them) are
not missing, the kernel was told not to see them. And CUDA agrees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import Nvml, open_helper
from kernel_harness import Kernel, snapshot_sample

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]


@pytest.mark.parametrize("value", ["", "-1"])
def test_a_cuda_visible_devices_that_hides_every_gpu_is_named(
    value: str, kernel_with_env: Callable[..., Kernel], bootstrap: str, nvml: Nvml, figures: Callable[..., Any]
) -> None:
    count = nvml.nvml.nvmlDeviceGetCount()
    kernel = kernel_with_env({"CUDA_VISIBLE_DEVICES": value})
    comm_id = open_helper(kernel, bootstrap)
    hidden = {"count": count, "cuda_visible_devices": value}
    hello = kernel.comm_data(comm_id, "hello")[0]
    assert hello["devices"] == [] and hello["hidden_gpus"] == hidden

    kernel.execute("import torch\ncuda_sees = torch.cuda.device_count()", timeout=300)
    figures(nvml_gpus=count, cuda_devices=kernel.eval("cuda_sees"), hidden_gpus=hello["hidden_gpus"])
    assert kernel.eval("cuda_sees") == 0  # CUDA sees none either: the note is true
    sample = snapshot_sample(kernel, comm_id, "s1", timeout=60)
    assert sample["gpus"] == [] and sample["hidden_gpus"] == hidden
