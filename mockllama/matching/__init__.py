"""Which recording answers a request: the canonical form llama-server generates from, the keys a
recording is looked up by, conversation turns, and the 404's nearest scenarios."""
