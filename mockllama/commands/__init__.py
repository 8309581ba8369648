"""The commands of ``mockllama``, one module each, imported by ``cli`` only when that command runs."""
