"""mockllama: replay real llama-server recordings, buggy or fixed, for offline client tests."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mockllama")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"
