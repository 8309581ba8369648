"""Test doubles of servers under test: small aiohttp apps that answer `mockllama check`'s probes
the way another real server does, each module naming the server and the issue it mirrors.

They are fakes of a *server being checked*, never recordings served to users. Most relay each
request to a running mockllama's `fixed` behaviour (the real llama-server recordings, as an
honest server reports them) and rewrite the Responses reply into the variant's shape
(`relay.py`), so the generated text, ids and usage stay the recorded ones.
"""
