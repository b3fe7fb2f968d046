"""The records of its devices that a real TensorFlow keeps, as the TensorFlow reader maps
logical devices to cards from them (readers/tensorflow.py: ``cuda_ordinals``).

Without a GPU the same records describe the CPUs, which TensorFlow also splits into
logical devices: a CPU split in two must map both logical CPUs to physical CPU 0, read
from the initialised context's attributes as the reader reads the GPUs'.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = Path(__file__).resolve().parents[2] / "python_helper"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="tensorflow is not installed (requirements-dev.txt: tensorflow-cpu)",
)

PROBE = r"""
import json, sys
sys.path.insert(0, HELPER)
import tensorflow as tf
from jupyterlab_vram_helper.sampling.readers import tensorflow as tf_reader

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
before = tf_reader.gpus_initialized()
tf.constant(1)  # TensorFlow sets up its devices
ctx = sys.modules["tensorflow.python.eager.context"]._context
logical = ctx.list_logical_devices("CPU")
print(json.dumps({
    "before": before,
    "after": tf_reader.gpus_initialized(),
    "logical": [d.name for d in logical],
    "cpu_ordinals": tf_reader.cuda_ordinals(ctx, len(logical), "CPU"),
    "gpu_ordinals": tf_reader.cuda_ordinals(ctx, 0),
    "gpus": tf_reader.read_gpus(tf),
}))
"""


def test_a_real_tensorflow_keeps_the_records_the_reader_maps_its_devices_from() -> None:
    run = subprocess.run(
        [sys.executable, "-c", f"HELPER = {str(HELPER)!r}\n" + PROBE],
        capture_output=True,
        text=True,
        timeout=240,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["before"] is False and seen["after"] is True
    assert seen["logical"] == ["/device:CPU:0", "/device:CPU:1"]
    assert seen["cpu_ordinals"] == [0, 0]
    assert seen["gpu_ordinals"] == [] and seen["gpus"] == {}  # no GPU: nothing to map, nothing read
