"""Outgoing steps: what may happen to a reply between its answer and the wire (a delay, a fault,
the pacing), one module each. Each declares the options that turn it on, its place in the order
and whether a plain body keeps the fast path (``step.Step``), and registers itself
(``registry.register``); `serve`'s options, the pytest plugin's, the server's ``Settings``, the
docs' tables and the steps an app runs are all made from the registry.

Every module of this package is imported here, so that each step is registered before anything
reads the registry: adding one is adding its module, with no list to extend.
"""

import importlib
import pkgutil

for _module in sorted(module.name for module in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
