"""mockllama: replay real llama-server recordings, buggy or fixed, for offline client tests.

The public API lives in its modules, each declaring it in ``__all__``: ``mockllama.app``
(``create_app``), ``mockllama.check`` (``run`` and its report) and ``mockllama.pytest_plugin``
(the fixtures). This package re-exports none of them: the modules below import ``__version__``
from here, so importing them from here would close a circle, and ``import mockllama`` stays as
cheap as reading a version.
"""

__all__ = ["__version__"]

# Read by the build (pyproject: [tool.hatch.version]). A literal, because importing
# importlib.metadata would slow every start-up.
__version__ = "0.2.0"
