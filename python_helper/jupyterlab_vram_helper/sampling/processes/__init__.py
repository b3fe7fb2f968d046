"""Every process the kernel started: found, recognised and measured for the sample's ``processes``.

proc_files.py reads one process's /proc files; descendants.py finds the
kernel's descendants (and follows those re-parented away); roles.py says what
each one is; rollup_budget.py paces the costly smaps_rollup reads;
process_tree.py puts them together into the sample's tree and its totals.
Linux only (/proc): elsewhere the tree is ``null``. Nothing here imports an
engine (torch, Ray, Dask, vLLM): roles.py looks in ``sys.modules``.
"""
