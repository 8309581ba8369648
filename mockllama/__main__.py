"""``python -m mockllama``: the ``mockllama`` command, for when its script is not on PATH."""

from mockllama.cli import main

main()
