"""mockllama: replay real llama-server recordings, buggy or fixed, for offline client tests."""

# Read by the build (pyproject: [tool.hatch.version]). A literal, because importing
# importlib.metadata would slow every start-up.
__version__ = "0.1.0"
