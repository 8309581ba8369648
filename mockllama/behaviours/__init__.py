"""The behaviours, pure functions from a recorded interaction to the reply to send: buggy (the
recording), fixed (the honest statuses), spec (the reference wire format), and any other a module
here registers (``registry``).

Every module of this package is imported here, so that each behaviour is registered before
anything lists them: adding one is adding its module, with no list to extend.
"""

import importlib
import pkgutil

for _module in sorted(module.name for module in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
