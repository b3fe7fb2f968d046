"""The TensorFlow reader: nothing read while TensorFlow is absent or not initialised, and the
memory info of each initialised GPU."""

import collections
import sys
import types
from typing import Any

from jupyterlab_vram_helper.sampling.readers import tensorflow as tf_reader


def test_tensorflow_absent_or_not_initialised(monkeypatch) -> None:
    assert tf_reader.tensorflow_info(None) is None
    tf: Any = types.ModuleType("tensorflow")  # a stand-in: attributes set at will
    tf.__version__ = "2.17.0"
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    assert tf_reader.tensorflow_info(tf) == {"version": "2.17.0", "gpus_initialized": False}
    ctx_mod: Any = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = None  # never created
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.gpus_initialized() is False
    ctx_mod._context = types.SimpleNamespace(_context_handle=None)  # created, not initialised
    assert tf_reader.gpus_initialized() is False
    assert tf_reader.read_gpus(tf) == {}


def test_tensorflow_initialised_reads_memory_info(monkeypatch) -> None:
    tf: Any = types.ModuleType("tensorflow")  # a stand-in: attributes set at will
    asked = []

    def get_memory_info(name):
        asked.append(name)
        return {"current": 10, "peak": 20}

    tf.config = types.SimpleNamespace(experimental=types.SimpleNamespace(get_memory_info=get_memory_info))
    ctx_mod: Any = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = types.SimpleNamespace(
        _context_handle=object(),
        list_logical_devices=lambda kind: [types.SimpleNamespace(name="/job:localhost/replica:0/task:0/device:GPU:1")],
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.read_gpus(tf) == {1: {"current_bytes": 10, "peak_bytes": 20}}
    assert asked == ["GPU:1"]


# TensorFlow's own record types (tf.config.PhysicalDevice, LogicalDevice): named tuples.
PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
GPU0 = PhysicalDevice("/physical_device:GPU:0", "GPU")
GPU1 = PhysicalDevice("/physical_device:GPU:1", "GPU")


def initialised_tensorflow(
    monkeypatch: Any, physical: Any, visible: Any, configurations: Any, logical_count: int, memory: Any
) -> Any:
    """An initialised TF whose context holds these records, as TF's eager context keeps them
    (``_physical_devices``, ``_visible_device_list``, ``_virtual_device_map``); ``memory``:
    logical device name -> (current, peak), or an exception to raise."""
    tf: Any = types.ModuleType("tensorflow")  # a stand-in: attributes set at will
    asked: list[str] = []

    def get_memory_info(name: str) -> dict[str, Any]:
        asked.append(name)
        figures = memory[name]
        if isinstance(figures, Exception):
            raise figures
        return {"current": figures[0], "peak": figures[1]}

    tf.config = types.SimpleNamespace(experimental=types.SimpleNamespace(get_memory_info=get_memory_info))
    ctx_mod: Any = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = types.SimpleNamespace(
        _context_handle=object(),
        _physical_devices=physical,
        _visible_device_list=visible,
        _virtual_device_map=configurations,
        list_logical_devices=lambda kind: [LogicalDevice(f"/device:GPU:{k}", "GPU") for k in range(logical_count)],
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    return tf, asked


def test_with_only_the_second_card_visible_tensorflows_gpu0_is_charged_to_cuda_ordinal_1(monkeypatch) -> None:
    # tf.config.set_visible_devices(gpus[1], "GPU")
    tf, asked = initialised_tensorflow(monkeypatch, [CPU, GPU0, GPU1], [CPU, GPU1], {}, 1, {"GPU:0": (10, 20)})
    assert tf_reader.read_gpus(tf) == {1: {"current_bytes": 10, "peak_bytes": 20}}
    assert asked == ["GPU:0"]


def test_a_card_split_into_two_logical_devices_adds_their_current_bytes_and_knows_no_peak(monkeypatch) -> None:
    # tf.config.set_logical_device_configuration(gpus[0], [LogicalDeviceConfiguration(1024)] * 2)
    tf, asked = initialised_tensorflow(
        monkeypatch,
        [CPU, GPU0, GPU1],
        [CPU, GPU0, GPU1],
        {GPU0: ["a", "b"]},
        3,
        {"GPU:0": (10, 20), "GPU:1": (5, 50), "GPU:2": (7, 8)},
    )
    assert tf_reader.read_gpus(tf) == {
        0: {"current_bytes": 15, "peak_bytes": None},
        1: {"current_bytes": 7, "peak_bytes": 8},
    }
    assert asked == ["GPU:0", "GPU:1", "GPU:2"]


def test_a_logical_device_that_cannot_be_read_leaves_its_cards_current_bytes_unknown(monkeypatch) -> None:
    tf, _ = initialised_tensorflow(
        monkeypatch, [GPU0], [GPU0], {GPU0: ["a", "b"]}, 2, {"GPU:0": (10, 20), "GPU:1": RuntimeError("no allocator")}
    )
    assert tf_reader.read_gpus(tf) == {0: {"current_bytes": None, "peak_bytes": None}}


def test_records_that_do_not_add_up_to_the_logical_devices_map_nothing(monkeypatch) -> None:
    # TF left a card out of its logical devices (one below its minimum compute capability):
    # its records then say nothing of which card is which, and GPU:k stays ordinal k.
    tf, _ = initialised_tensorflow(monkeypatch, [GPU0, GPU1], [GPU0, GPU1], {}, 1, {"GPU:0": (10, 20)})
    assert tf_reader.cuda_ordinals(sys.modules["tensorflow.python.eager.context"]._context, 1) is None
    assert tf_reader.read_gpus(tf) == {0: {"current_bytes": 10, "peak_bytes": 20}}


def test_the_mapping_reads_only_tensorflows_records_of_its_devices(monkeypatch) -> None:
    class Context:
        _physical_devices = [GPU0, GPU1]
        _visible_device_list = [GPU1]
        _virtual_device_map = {GPU1: ["a", "b"]}

        def __getattr__(self, name):
            raise AssertionError(f"the mapping asked the context for {name}")

    assert tf_reader.cuda_ordinals(Context(), 2) == [1, 1]


def test_device_ordinals_order_the_logical_devices_ties_in_physical_then_list_order() -> None:
    # TensorFlow's own class name, which the reader may print.
    Configuration = collections.namedtuple(  # type: ignore[name-match]
        "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority", "experimental_device_ordinal"]
    )
    ctx = types.SimpleNamespace(
        _physical_devices=[GPU0, GPU1],
        _visible_device_list=[GPU0, GPU1],
        # GPU:0 and GPU:2 on card 0 come after card 1's first device (ordinal 0 ties: physical order)
        _virtual_device_map={
            GPU0: [Configuration(1024, None, 1), Configuration(1024, None, 1)],
            GPU1: [Configuration(1024, None, 0), Configuration(1024, None, 2)],
        },
    )
    assert tf_reader.cuda_ordinals(ctx, 4) == [1, 0, 0, 1]
    ctx._virtual_device_map = {GPU0: [Configuration(1024, None, None)] * 2}  # unset: 0 for all
    assert tf_reader.cuda_ordinals(ctx, 3) == [0, 0, 1]
