"""Recordings: cassettes read safely and checked, their index, the scenario catalogue, the
Responses-to-chat conversion, and `mockllama record` that makes them."""
