"""The fault kinds, one module each: every module here is imported by ``server.faults.discover``,
and the ``FaultKind`` it registers is a fault ``X-Mockllama-Fault`` and ``serve --fault`` take."""
