"""The largest reply mockllama records from a live llama-server, by `record` and by `serve --upstream`."""

# A cut-off reply is kilobytes; a reply this large is a server gone wrong, not a recording.
DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024
