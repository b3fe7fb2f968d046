"""Builds the ``hello`` message, which says who this helper is and what it can see."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from ..config import SamplerConfig
from ..protocol import HELPER_VERSION, PROTOCOL_VERSION, python_version
from ..sampling.readers import tensorflow as tf_reader
from ..sampling.readers import torch_cuda
from ..sampling.sample import SampleSource

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import HelloMessage


def hello_message(source: SampleSource, config: SamplerConfig, record_series: str = "") -> HelloMessage:
    """Build the ``hello`` message that tells a frontend who this helper is and what it can see."""
    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = ""
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "helper_version": HELPER_VERSION,
        "python": python_version(),
        "pid": os.getpid(),
        "hostname": hostname,
        "record_series": record_series,
        "torch": torch_cuda.torch_info(torch_cuda.loaded_torch()),
        "tensorflow": tf_reader.tensorflow_info(tf_reader.loaded_tensorflow()),
        "nvml": source.nvml.info(),
        "devices": [d.to_info() for d in source.devices()],
        "devices_wait_for_cuda": source.devices_wait_for_cuda(),
        "hidden_gpus": source.hidden_gpus(),
        "config": config.to_dict(),
    }
