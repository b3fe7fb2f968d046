"""Allocation recording, which finds live memory by the notebook line that allocated it.

Recording is off by default, and the ``record_allocations`` request turns it
on (allocation_sites.py). Host memory is traced through ``tracemalloc``
(host_allocations.py) and GPU memory through PyTorch's allocator history
(gpu_allocations.py), and both are grouped by notebook line
(site_grouping.py). The runtime loads this subpackage at the first request
rather than at the bootstrap, so that kernels that never record pay nothing
for it, and this file imports nothing.
"""
