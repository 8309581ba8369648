"""The shared leaves: what every layer may import (routes, the error shape, HTTP header sets, SSE
framing, the JSON nesting limit). They import nothing of mockllama's above them."""
