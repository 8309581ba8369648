"""Cassette YAML read with PyYAML's safe loader, whatever vcrpy would use, and with aliases bounded.

Some vcrpy releases read cassettes with PyYAML's unsafe loader, where a tag such as
``!!python/object/apply:os.system`` runs a command. And YAML aliases can nest ("billion
laughs"): 600 bytes that expand to gigabytes once anything walks them. mockllama parses the
text itself, refuses both, and hands vcrpy the parsed data to read as a cassette.
"""

from __future__ import annotations

import yaml

# A document may grow through aliases to this many times its own length (plus a little), no more.
EXPANSION_FACTOR = 10
EXPANSION_SLACK = 1024 * 1024


class UnsafeYaml(ValueError):
    """The text is YAML, but not YAML mockllama will build objects from; the message says why."""


# libyaml's parser when PyYAML has it (what vcrpy uses too): the pure-Python one is ten times slower.
_SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CassetteLoader(_SAFE_BASE):
    """The safe loader, with unknown tags reported as what they are: unsafe, not merely unknown."""

    def construct_undefined(self, node):
        mark = node.start_mark
        raise UnsafeYaml(f"unsafe YAML tag {node.tag!r} at line {mark.line + 1}: mockllama reads cassettes "
                         "with YAML's safe loader only (plain mappings, lists, strings, numbers, !!binary)")


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


def load_yaml(text: str):
    """The one YAML document in ``text``, built with the safe loader; UnsafeYaml for tags or aliases
    mockllama refuses, yaml.YAMLError for text that is not YAML."""
    loader = _CassetteLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        limit = EXPANSION_FACTOR * len(text) + EXPANSION_SLACK
        if expanded_size(root, limit) > limit:
            raise UnsafeYaml(f"its YAML aliases expand to more than {limit} units from {len(text)} bytes "
                             "(a 'billion laughs' document); mockllama refuses it")
        return loader.construct_document(root)
    finally:
        loader.dispose()
