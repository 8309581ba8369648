"""The benchmark: mockllama against the floor (``floor``), its peers and llama-server (``run``), its
start-up beside aimock's (``startup``), at scale (``scale``), and through ``serve --upstream``
(``upstream``). ``python -m benchmarks`` runs it."""
