"""Allocation recording, which finds live memory by the notebook line that allocated it.

Off by default; the ``record_allocations`` request turns it on
(allocation_sites.py). Host memory is traced through ``tracemalloc``
(host_allocations.py) and GPU memory through PyTorch's allocator history
(gpu_allocations.py); both are grouped by notebook line
(site_grouping.py). The runtime loads this subpackage at the first request,
not at the bootstrap; nothing is imported by this file.
"""
