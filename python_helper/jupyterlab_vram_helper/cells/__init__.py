"""Per-cell accounting, which works out what each executed cell cost from readings taken in IPython's cell hooks.

Each cell gets a record of its host and GPU memory and peaks
(cell_accounting.py, with cell_readings.py while it runs and cell_records.py
once it ended), tracked across nested cells and subshells (running_cells.py)
and numbered as the notebook numbers it (execution_counts.py). The notebook's
cells are also named here for the other features: which cell a code file
name belongs to (cell_files.py), how much a cell's allocations still hold
(cell_alive.py), and which user names a snippet should use
(notebook_names.py). The hooks run on every cell, so nothing is imported by
this file: the bootstrap pays for a module only when something uses it.
"""
