"""`serve --upstream`: forward what no recording answers to a live llama-server, record it, serve it."""
