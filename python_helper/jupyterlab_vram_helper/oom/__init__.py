"""Recognises out-of-memory errors and explains why a cell ran out of memory.

cell_outcome.py tells what became of a cell and whether its error was an
out-of-memory one (per-cell accounting and the cleanup use it for every
error). After such an error the runtime asks oom_watch.py for a diagnosis:
oom_message.py reads the figures the error message carries, oom_diagnosis.py
merges them with the state read afterwards and names the likely causes, and
error_frames.py walks the frames the failed cell's traceback keeps alive
(the cleanup reads them too). The diagnosis's modules are loaded with the
first out-of-memory error, not at the bootstrap; nothing is imported by
this file.
"""
