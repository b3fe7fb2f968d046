"""The kernel's own entry in NVML's process list, inside and outside a container.

NVML names processes by pid, in the namespace the driver chooses: recent
drivers translate them into the caller's pid namespace (and leave out
processes outside it), older ones give host pids. The kernel knows only its
own namespace's pid. Where the list holds pids that are no process here, it
speaks another namespace, and a listed pid equal to the kernel's may be another
process's (a container's kernel at pid 1234, a host process at host pid 1234):
"this process" is then unknown, as docs/limits.md says, never that process's bytes.
"""

from fakes import FakeGpu, FakePynvml, known

from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader, attribute_to_pid

KERNEL_PID = 1234  # the kernel's pid in its container
KERNEL_HOST_PID = 2_345_678  # the same process, as the host numbers it
OTHER_AT_1234 = 1234  # another container's process, host pid 1234
HERE = {1, 80, KERNEL_PID}  # the pids of the kernel's container


def exists_here(pid: int) -> bool:
    return pid in HERE


def test_a_host_pid_equal_to_the_kernels_leaves_its_figure_unknown() -> None:
    listed = [(OTHER_AT_1234, 30 << 30), (KERNEL_HOST_PID, 2 << 30)]
    assert attribute_to_pid(listed, KERNEL_PID, exists_here) is None


def test_the_process_list_then_names_no_entry_this_process() -> None:
    gpu = FakeGpu(
        "GPU-0", "NVIDIA A100", 80 << 30, 32 << 30, processes=[(OTHER_AT_1234, 30 << 30), (KERNEL_HOST_PID, 2 << 30)]
    )
    r = NvmlReader(pid=KERNEL_PID, load=lambda: FakePynvml([gpu]), pid_exists=exists_here)
    r.start()
    figures = known(r.read(r.devices()[0], fresh_processes=True))
    assert figures["process_used_bytes"] is None
    assert [p["this_process"] for p in known(figures["processes"])] == [False, False]


def test_a_list_in_the_kernels_own_namespace_still_names_it() -> None:
    # A recent driver in a container: the kernel's own pid, and only its container's processes.
    assert attribute_to_pid([(KERNEL_PID, 2 << 30), (80, 1 << 30)], KERNEL_PID, exists_here) == 2 << 30
    assert attribute_to_pid([(80, 1 << 30)], KERNEL_PID, exists_here) == 0  # listed, and not the kernel
    gpu = FakeGpu("GPU-0", "NVIDIA A100", 80 << 30, 3 << 30, processes=[(KERNEL_PID, 2 << 30), (80, 1 << 30)])
    r = NvmlReader(pid=KERNEL_PID, load=lambda: FakePynvml([gpu]), pid_exists=exists_here)
    r.start()
    figures = known(r.read(r.devices()[0], fresh_processes=True))
    assert figures["process_used_bytes"] == 2 << 30
    assert [(p["pid"], p["this_process"]) for p in known(figures["processes"])] == [(KERNEL_PID, True), (80, False)]
