"""mockllama uses aiohttp's public API: no `_`-prefixed attribute of an aiohttp object anywhere in
the package but in the one module that says why (mockllama/server/aiohttp_private.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mockllama

PACKAGE = Path(mockllama.__file__).parent
ALLOWED = PACKAGE / "server" / "aiohttp_private.py"
# What the package calls aiohttp's objects, whatever their annotation says.
USUAL_NAMES = {"request", "response", "writer", "transport", "app", "router", "resp", "protocol", "payload_writer"}


def _imported_from_aiohttp(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "aiohttp"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "aiohttp":
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from: ``request.transport._x`` -> ``request``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mentions(annotation: ast.expr | None, names: set[str]) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return any(name in annotation.value for name in names)
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(annotation))


def _bound_to_aiohttp(tree: ast.Module) -> set[str]:
    """Names in the module that hold aiohttp's modules, classes or objects."""
    imported = _imported_from_aiohttp(tree)
    bound = imported | USUAL_NAMES
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _mentions(node.annotation, imported):
            bound.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _mentions(node.annotation, imported):
                bound.add(node.target.id)
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.Await)):
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if isinstance(call, ast.Call) and _root(call.func) in imported:
                bound |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return bound


def private_uses(source: str) -> list[str]:
    """Each use of a `_`-prefixed (not dunder) attribute of something bound to aiohttp in ``source``."""
    tree = ast.parse(source)
    bound = _bound_to_aiohttp(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if _root(node.value) in bound:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "aiohttp":
            found += [f"line {node.lineno}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr"):
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and str(name.value).startswith("_") and _root(node.args[0]) in bound:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_private_attribute_of_aiohttp_is_used_outside_its_one_module():
    found = {
        str(path.relative_to(PACKAGE)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != ALLOWED and (uses := private_uses(path.read_text(encoding="utf-8")))
    }
    assert not found, f"aiohttp's private API, outside {ALLOWED.name}: {found}"


def test_the_one_module_is_where_the_private_uses_are():
    assert private_uses(ALLOWED.read_text(encoding="utf-8")), "nothing private left: fold the module away"


@pytest.mark.parametrize(
    "source",
    [
        "def f(response):\n    response._set_status(400, None)\n",
        "from aiohttp import web\ndef f(req: web.Request):\n    return req.transport._sock\n",
        "from aiohttp import web\ndef f(r: 'web.StreamResponse'):\n    r._headers.clear()\n",
        "from aiohttp import web\nr = web.Response()\nr._body = b''\n",
        "from aiohttp.web_response import _SERVER_SOFTWARE\n",
        "def f(request):\n    return getattr(request, '_payload_writer')\n",
    ],
)
def test_each_way_of_reaching_a_private_attribute_is_caught(source):
    assert private_uses(source)


@pytest.mark.parametrize(
    "source",
    [
        "class Journal:\n    def keep(self):\n        self._seen.append(1)\n",
        "def f(settings):\n    return settings._cache\n",
        "def f(request):\n    return request.app[KEY]._remembered\n",
        "def f(response):\n    return response.__class__\n",
    ],
)
def test_mockllamas_own_private_names_are_its_own(source):
    assert not private_uses(source)
