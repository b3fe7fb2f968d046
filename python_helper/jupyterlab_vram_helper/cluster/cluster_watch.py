"""The cheap check, at every sampler tick, of whether the kernel uses a cluster engine at all.

It is the only module of this package that the runtime imports at start, so it holds nothing
but a look into ``sys.modules``: the poller (cluster_poller.py) and everything it reads are
loaded at the first tick that finds ``distributed`` or ``ray`` imported, because most kernels
never use either, and the bootstrap's cost matters (benchmarks/bootstrap_cost.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

# The modules whose presence means an engine may be in use. The helper never imports them.
ENGINE_MODULES = ("distributed", "ray")


def engine_imported(modules: Any = None) -> bool:
    """Whether Dask's distributed or Ray was imported by the user's code (dict lookups only)."""
    found = sys.modules if modules is None else modules
    return any(name in found for name in ENGINE_MODULES)


class ClusterWatch:
    """Starts the cluster poller once an engine is imported and watching is on, and stops it at the end."""

    def __init__(self, make_poller: Callable[[], Any]):
        # Builds the poller; called once, at the first tick that finds an engine.
        self._make_poller = make_poller
        self.poller: Any = None

    def tick(self, watch: bool) -> None:
        """Called at each sampler tick with the config's ``watch_cluster``: cheap and never raising."""
        try:
            poller = self.poller
            if not watch:
                if poller is not None and poller.running:
                    poller.stop(final=True)
                return
            if poller is not None:
                if not poller.running:
                    poller.start()
                return
            if engine_imported():
                self.poller = self._make_poller()
                self.poller.start()
        except Exception:
            # A poller that cannot start costs the user nothing but its figures.
            pass

    def stop(self) -> None:
        """Stop the poller, if one started (the helper's uninstall)."""
        poller = self.poller
        if poller is not None:
            try:
                poller.stop(final=False)
            except Exception:
                pass
