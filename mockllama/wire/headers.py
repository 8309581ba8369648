"""HTTP header sets shared by the replay writer, the faults and the upstream relay."""

import re

# Hop-by-hop framing headers: the server computes these itself; replaying or relaying recorded
# values would corrupt the framing.
HOP_BY_HOP = frozenset(
    {"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)

# What no header value may hold (RFC 9110 section 5.5; aiohttp refuses to send it): control
# characters but the tab.
UNSENDABLE_IN_A_HEADER = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
