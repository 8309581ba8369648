"""The behaviours, pure functions from a recorded interaction to the reply to send: buggy (the
recording), fixed (the honest statuses) and spec (the reference wire format)."""
