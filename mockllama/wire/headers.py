"""HTTP header sets shared by the replay writer, the faults and the upstream relay."""

# Hop-by-hop framing headers: the server computes these itself; replaying or relaying recorded
# values would corrupt the framing.
HOP_BY_HOP = frozenset(
    {"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)
