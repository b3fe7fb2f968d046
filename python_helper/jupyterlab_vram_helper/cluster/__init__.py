"""The memory of the Dask or Ray cluster a notebook drives, read from the engine's own telemetry.

Nothing here is imported when the kernel starts: the runtime looks into ``sys.modules`` at each
sampler tick and loads :mod:`.cluster_poller` only once a Dask client or a Ray runtime is in use
(see cluster_watch.py). The helper never imports an engine itself.
"""
