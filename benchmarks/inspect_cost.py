"""What an `inspect` request costs in a big namespace (target: at most 200 ms).

Prints figures; it is not a test. A real ipykernel, bootstrapped like the
frontend does, gets a namespace of 10,000 variables: 1,000 CPU tensors (small,
so that memory is not the point; 100 of them views or aliases of others), 100
lists/dicts of tensors, a module and an optimizer, and the rest plain Python
values (ints, strings, lists of ints, dicts, functions, class instances).
Then it asks for `inspect` several times and prints the helper's own
`elapsed_ms` (median, min, max) and the round trip seen by the client.

    .venv/bin/python benchmarks/inspect_cost.py [--tries 7] [--variables 10000] [--tensors 1000]
                                                [--device cpu|cuda] [--json PATH]

With ``--device cuda`` the tensors (and the module and optimizer) live on the
GPU, so the helper reads CUDA tensors' sizes and devices. ``--json PATH`` also
writes these figures and the target's verdict as JSON.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python_helper"))

from _common import add_common_arguments, require_device, target, write_json  # noqa: E402
from kernel_harness import Kernel, attach_helper, bootstrap_code  # noqa: E402

SETUP = """
import torch
_device = "{device}"
class _Thing:
    def __init__(self, i):
        self.i = i
        self.name = str(i)
_g = globals()
_tensors = []
for _k in range({tensors}):
    if _k % 10 == 9:
        _t = _tensors[_k - 1][:4] if _k % 20 == 9 else _tensors[_k - 1]   # a view, or an alias
    else:
        _t = torch.zeros(256, device=_device)
    _tensors.append(_t)
    _g[f"t{{_k}}"] = _t
for _k in range(100):
    _g[f"batch{{_k}}"] = [_tensors[_k], _tensors[_k + 1]] if _k % 2 else {{"x": _tensors[_k], "y": [_tensors[_k + 2]]}}
net = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(10)]).to(_device)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
net(torch.ones(2, 64, device=_device)).sum().backward(); opt.step()
_plain = {plain}
for _k in range(_plain):
    _r = _k % 5
    _g[f"v{{_k}}"] = (
        _k if _r == 0 else str(_k) if _r == 1 else list(range(20)) if _r == 2
        else {{"k": _k}} if _r == 3 else _Thing(_k)
    )
del _g, _k, _t, _r, _tensors
len(get_ipython().user_ns)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=7)
    parser.add_argument("--variables", type=int, default=10_000)
    parser.add_argument("--tensors", type=int, default=1_000)
    add_common_arguments(parser)
    args = parser.parse_args()
    require_device(args.device)
    plain = args.variables - args.tensors - 100 - 2
    kernel = Kernel()
    try:
        comm_id = attach_helper(kernel, bootstrap_code(), timeout=60)
        reply = kernel.execute(SETUP.format(tensors=args.tensors, plain=plain, device=args.device), timeout=300)
        assert reply["status"] == "ok", reply
        names = kernel.eval("len([k for k in get_ipython().user_ns if not k.startswith('_')])")
        kernel_ms, round_trip_ms = [], []
        result = None
        on_gpu = None
        for i in range(args.tries):
            start = time.perf_counter()
            answer = kernel.request(
                comm_id, {"type": "inspect", "request_id": f"b{i}", "max_entries": 5000}, timeout=120
            )
            round_trip_ms.append((time.perf_counter() - start) * 1000)
            assert answer["type"] == "reply", answer
            result = answer["result"]
            kernel_ms.append(result["elapsed_ms"])
        assert result is not None
        if args.device == "cuda":
            # proof the setup really put the tensors on the GPU
            on_gpu = kernel.eval(
                "sum(1 for v in get_ipython().user_ns.values() if isinstance(v, torch.Tensor) and v.is_cuda)"
            )
            print(f"device: cuda ({on_gpu} named CUDA tensors)")
        print(
            f"namespace: {names} user variables ({args.tensors} tensors, 100 containers of tensors, 1 module, 1 "
            "optimizer)"
        )
        print(f"entries listed: {len(result['entries'])}, truncated: {result['truncated']}")
        print(
            f"inspect elapsed_ms (kernel side, {args.tries} tries): median {statistics.median(kernel_ms):.1f} ms, "
            f"min {min(kernel_ms):.1f}, max {max(kernel_ms):.1f} (budget 200 ms)"
        )
        print(
            f"round trip seen by the client (includes the harness's 0.1 s polling): "
            f"median {statistics.median(round_trip_ms):.0f} ms"
        )
        median = statistics.median(kernel_ms)
        figures = {
            "user_variables": names,
            "entries_listed": len(result["entries"]),
            "entries_truncated": bool(result["truncated"]),
            "elapsed_ms_median": round(median, 2),
            "elapsed_ms_min": round(min(kernel_ms), 2),
            "elapsed_ms_max": round(max(kernel_ms), 2),
            "round_trip_ms_median": round(statistics.median(round_trip_ms), 1),
        }
        if on_gpu is not None:
            figures["cuda_tensors_named"] = on_gpu
        write_json(
            args.json,
            "inspect_cost",
            args.device,
            {"tries": args.tries, "variables": args.variables, "tensors": args.tensors},
            figures,
            [
                target(
                    f"inspect with {args.tensors} {args.device} tensors, helper's elapsed_ms median", median, 200, "ms"
                )
            ],
        )
    finally:
        kernel.shutdown()


if __name__ == "__main__":
    main()
