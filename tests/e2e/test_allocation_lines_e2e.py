"""Live memory charged to the right notebook line in cases the main e2e file leaves out:
%%time bodies that start with blank lines, code a %%time cell defined and another cell calls."""

from __future__ import annotations

import pytest
from kernel_harness import Kernel, attach_helper
from test_allocation_sites_e2e import QUIET, _cell_sites, reply, run

pytestmark = pytest.mark.kernel


def test_a_timed_body_that_starts_with_blank_lines_keeps_its_lines(kernel: Kernel, bootstrap: str) -> None:
    # %%time drops the blank lines at the top of its body before it compiles it:
    # line 1 of '<timed exec>' is the body's first line that is not blank.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, "%%time\n\n  \nblank_top = np.zeros(2_000_000)\n", cell_id="c-timed-blank")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    sites = _cell_sites(listing, "c-timed-blank")
    assert sorted(sites) == [4], sites
    assert sites[4]["code"] == "blank_top = np.zeros(2_000_000)"
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_a_function_a_timed_cell_defined_is_charged_to_the_line_that_calls_it(kernel: Kernel, bootstrap: str) -> None:
    # Code a %%time cell defines keeps '<timed exec>' as its file name: called
    # later from a plain cell, the calling line is the notebook line (with the
    # function's own frame beneath), not a line of the caller numbered as the body's.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nkeep = []\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(
        kernel,
        "%%time\nclass Model:\n    def __init__(self):\n        self.n = 1\n    def grow(self):\n"
        "        keep.append(np.zeros(2_000_000))\n",
        cell_id="c-timed-def",
    )
    run(kernel, "model = Model()\nmodel.grow()\n", cell_id="c-call")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    sites = _cell_sites(listing, "c-call")
    assert sorted(sites) == [2], sites
    assert sites[2]["code"] == "model.grow()"
    beneath = sites[2]["library_frame"]
    assert beneath is not None and (beneath["filename"], beneath["line"]) == ("<timed exec>", 5), beneath
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})
