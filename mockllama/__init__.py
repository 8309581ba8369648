"""mockllama: replay real llama-server recordings, buggy or fixed, for offline client tests."""

# Read by the build (pyproject: [tool.hatch.version]). A literal, because importlib.metadata
# costs ~45 ms of every start-up.
__version__ = "0.1.0"
