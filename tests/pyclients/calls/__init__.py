"""Each client's calls, one module a client: ``CLIENT`` (its name on the page) and ``CALLS``."""
