"""The benchmark: mockllama against the floor, its peers and llama-server (``run``), at scale
(``scale``), and through ``serve --upstream`` (``upstream``). ``python -m benchmarks`` runs it."""
