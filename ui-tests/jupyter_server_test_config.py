"""JupyterLab server for the browser tests (Galata's standard test setup).

Galata's helper makes a throw-away root directory, disables the token and
turns on the test hooks that `@jupyterlab/galata` needs.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

# CI and these machines run as root; the server is on loopback and throw-away.
c.ServerApp.allow_root = True  # noqa: F821
