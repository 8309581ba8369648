"""Cassette YAML read with PyYAML's safe loader, whatever vcrpy would use, and with aliases bounded.

Some vcrpy releases read cassettes with PyYAML's unsafe loader, where a tag such as
``!!python/object/apply:os.system`` runs a command. And YAML aliases can nest ("billion
laughs"): 600 bytes that expand to gigabytes once anything walks them. mockllama parses the
text itself, refuses both, and hands vcrpy the parsed data to read as a cassette.
"""

from __future__ import annotations

import operator
import re
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

# A document may grow through aliases to this many times its own length (plus a little), no more.
EXPANSION_FACTOR = 10
EXPANSION_SLACK = 1024 * 1024


class UnsafeYaml(ValueError):
    """The text is YAML, but not YAML mockllama will build objects from; the message says why."""


# libyaml's parser when PyYAML has it (what vcrpy uses too): the pure-Python one is ten times slower.
if TYPE_CHECKING:  # both have one interface; the type checker is shown the one every PyYAML has
    _SAFE_BASE = yaml.SafeLoader
else:
    _SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CassetteLoader(_SAFE_BASE):
    """The safe loader, with unknown tags reported as what they are: unsafe, not merely unknown."""

    def construct_undefined(self, node):
        mark = node.start_mark
        raise UnsafeYaml(
            f"unsafe YAML tag {node.tag!r} at line {mark.line + 1}: mockllama reads cassettes "
            "with YAML's safe loader only (plain mappings, lists, strings, numbers, !!binary)"
        )

    def resolve(self, kind, value, implicit):
        """PyYAML's tag resolution, which libyaml's parser calls for every node, remembered for
        short plain scalars (a cassette's keys and small values repeat); a quoted scalar is a
        string, a mapping a map and a list a seq, as this loader has no path resolvers."""
        if kind is _SCALAR_NODE:
            if not implicit[0]:
                return self.DEFAULT_SCALAR_TAG
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= 40 and len(_RESOLVED) < 10_000:
                    _RESOLVED[value] = tag
            return tag
        return self.DEFAULT_MAPPING_TAG if kind is _MAPPING_NODE else self.DEFAULT_SEQUENCE_TAG

    # libyaml's parser calls these two around every node, for path resolvers, which this loader
    # has none of: C functions that do nothing, not a Python call each, on every node.
    # Their results are never read, so the stubs' "returns None" does not bind these.
    descend_resolver = staticmethod(operator.is_)  # type: ignore[assignment]
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]


_SCALAR_NODE, _MAPPING_NODE = yaml.ScalarNode, yaml.MappingNode
_RESOLVED: dict[str, str] = {}
_CassetteLoader.add_constructor(None, _CassetteLoader.construct_undefined)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def expanded_size(root: yaml.Node, limit: int) -> int:
    """The size ``root`` would have with every alias written out (scalar lengths plus one per node),
    computed once per distinct node, so a bomb costs no more than its text; stops past ``limit``."""
    sizes: dict[int, int] = {}
    on_path = {id(root)}
    stack = [(root, iter(_children(root)))]
    while stack:
        node, remaining = stack[-1]
        child = next(remaining, None)
        if child is not None:
            if id(child) in on_path:
                raise UnsafeYaml(f"a YAML alias at line {child.start_mark.line + 1} contains itself")
            if id(child) not in sizes:
                on_path.add(id(child))
                stack.append((child, iter(_children(child))))
            continue
        stack.pop()
        on_path.discard(id(node))
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = len(node.value) + 1
        else:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
        if sizes[id(node)] > limit:
            return sizes[id(node)]
    return sizes[id(root)]


# An alias is "*name", and names an anchor "&name": text without both cannot hold one, and
# without aliases a document is no larger than its text. Walking every node to size it was a
# sixth of the time of reading a cassette, so it is walked only where both appear.
_ANCHOR = re.compile(r"&[^\s,\[\]{}]")
_ALIAS = re.compile(r"\*[^\s,\[\]{}]")


# The same on bytes: a byte past "&" or "*" that is not ASCII counts as a name, so a file may be
# walked where its text would not be, never the other way.
_ANCHOR_BYTES = re.compile(_ANCHOR.pattern.encode())
_ALIAS_BYTES = re.compile(_ALIAS.pattern.encode())


def _may_alias(text: str) -> bool:
    return _ANCHOR.search(text) is not None and _ALIAS.search(text) is not None


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_SCALARS = {f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "binary", "timestamp")}


class _Unusual(Exception):
    """Something _tree leaves to PyYAML's constructor: merge keys, sets, ordered maps, odd keys."""


def _tree(loader, node):
    """A document without aliases (a tree) built as PyYAML's safe constructor builds it, in a third
    of the time: plain mappings, lists and scalars (each scalar by PyYAML's own function); anything
    else is _Unusual. PyYAML's constructor was a quarter of the time of reading a cassette."""
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _MAP:
        # A string (most nodes) is taken here, not in a call of its own. A merge ("<<") or value
        # ("=") key has a tag of its own.
        mapping = {}
        for key_node, value_node in node.value:
            key = key_node.value if key_node.tag == _STR else _tree(loader, key_node)
            try:
                mapping[key] = value_node.value if value_node.tag == _STR else _tree(loader, value_node)
            except TypeError:  # an unhashable key: PyYAML says so in its own words
                raise _Unusual from None
        return mapping
    if tag == _SEQ:
        return [child.value if child.tag == _STR else _tree(loader, child) for child in node.value]
    if tag in _SCALARS:
        return loader.yaml_constructors[tag](loader, node)
    raise _Unusual


def load_yaml(text: str):
    """The one YAML document in ``text``, built with the safe loader; UnsafeYaml for tags or aliases
    mockllama refuses, yaml.YAMLError for text that is not YAML."""
    return _load(text, len(text), _may_alias(text))


def load_yaml_file(path: Path, size: int):
    """The one YAML document in the file at ``path`` (``size`` bytes), as ``load_yaml`` builds it but
    parsed as the file is read: a document with a few very large scalars (a recorded reply of tens
    of megabytes) is then never held whole as text, nor as the UTF-8 copy the parser takes of a
    text. UnicodeDecodeError for a file that is not UTF-8."""
    may_alias = _file_may_alias(path)
    with open(path, encoding="utf-8") as handle:
        return _load(handle, size, may_alias)


def _file_may_alias(path: Path) -> bool:
    """``_may_alias`` for a file, read a mebibyte at a time (a match may straddle two reads)."""
    anchor = alias = False
    tail = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(1024 * 1024):
            window = tail + chunk
            anchor = anchor or _ANCHOR_BYTES.search(window) is not None
            alias = alias or _ALIAS_BYTES.search(window) is not None
            if anchor and alias:
                return True
            tail = chunk[-1:]
    return False


def _load(source, size: int, may_alias: bool):
    loader = _CassetteLoader(source)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        limit = EXPANSION_FACTOR * size + EXPANSION_SLACK
        if not may_alias:
            try:
                return _tree(loader, root)
            except _Unusual:
                pass  # PyYAML's constructor builds it, or says what is wrong with it
        elif expanded_size(root, limit) > limit:
            raise UnsafeYaml(
                f"its YAML aliases expand to more than {limit} units from {size} bytes "
                "(a 'billion laughs' document); mockllama refuses it"
            )
        return loader.construct_document(root)
    finally:
        loader.dispose()
