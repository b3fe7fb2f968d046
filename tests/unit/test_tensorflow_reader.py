"""The TensorFlow reader: nothing read while TensorFlow is absent or not initialised, and the
memory info of each initialised GPU."""

import sys
import types

from jupyterlab_vram_helper.readers import tensorflow as tf_reader


def test_tensorflow_absent_or_not_initialised(monkeypatch) -> None:
    assert tf_reader.tensorflow_info(None) is None
    tf = types.ModuleType("tensorflow")
    tf.__version__ = "2.17.0"
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    assert tf_reader.tensorflow_info(tf) == {"version": "2.17.0", "gpus_initialized": False}
    ctx_mod = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = None  # never created
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.gpus_initialized() is False
    ctx_mod._context = types.SimpleNamespace(_context_handle=None)  # created, not initialised
    assert tf_reader.gpus_initialized() is False
    assert tf_reader.read_gpus(tf) == {}


def test_tensorflow_initialised_reads_memory_info(monkeypatch) -> None:
    tf = types.ModuleType("tensorflow")
    asked = []

    def get_memory_info(name):
        asked.append(name)
        return {"current": 10, "peak": 20}

    tf.config = types.SimpleNamespace(experimental=types.SimpleNamespace(get_memory_info=get_memory_info))
    ctx_mod = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = types.SimpleNamespace(
        _context_handle=object(),
        list_logical_devices=lambda kind: [types.SimpleNamespace(name="/job:localhost/replica:0/task:0/device:GPU:1")],
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.read_gpus(tf) == {1: {"current_bytes": 10, "peak_bytes": 20}}
    assert asked == ["GPU:1"]
