"""The aiohttp replay server and what it applies on the way out: behaviour selection, CORS, limits,
the journal, faults, pacing and the writer."""
