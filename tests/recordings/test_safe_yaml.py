"""recordings.safe_yaml builds a document without aliases itself (a third of PyYAML's time): it must
build exactly what PyYAML's safe loader builds, and leave the rest (merge keys, sets, unhashable
keys, aliases) to PyYAML."""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllama.recordings import safe_yaml
from mockllama.recordings.cassettes import bundled_cassette_dir, patched_cassette_dir
from mockllama.recordings.safe_yaml import load_yaml

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.datetimes(timezones=st.just(datetime.timezone.utc))
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text() | st.integers(), inner, max_size=4),
    max_leaves=25,
)


@given(documents, st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_document_loads_as_pyyaml_loads_it(document, flow):
    text = yaml.safe_dump({"interactions": document}, default_flow_style=flow, allow_unicode=True)
    assert load_yaml(text) == yaml.safe_load(text)


@pytest.mark.parametrize("directory", [bundled_cassette_dir(), patched_cassette_dir()], ids=["stock", "patched"])
def test_every_shipped_cassette_loads_as_pyyaml_loads_it(directory):
    for path in directory.rglob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), path


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {a: 1}\nmerged: {<<: *b, c: 2}\n",  # a merge key (aliases present: PyYAML builds it)
        "merged: {<<: {a: 1}, c: 2}\n",  # a merge key without an alias
        "s: !!set {a, b}\n",
        "o: !!omap [{a: 1}, {b: 2}]\n",
        "p: !!pairs [{a: 1}, {a: 2}]\n",
        "=: value key\n",
    ],
)
def test_what_the_fast_path_leaves_to_pyyaml_is_built_by_pyyaml(text):
    assert load_yaml(text) == yaml.safe_load(text)


def test_an_unhashable_key_is_pyyamls_error(monkeypatch):
    with pytest.raises(yaml.constructor.ConstructorError, match="unhashable"):
        load_yaml("? [a, b]\n: c\n")


def test_a_document_without_aliases_does_not_go_through_pyyamls_constructor(monkeypatch):
    def refuse(*_args):
        raise AssertionError("PyYAML's constructor was used")

    monkeypatch.setattr(safe_yaml._CassetteLoader, "construct_document", refuse)
    assert load_yaml("a: [1, 2.5, true, null, text]\n") == {"a": [1, 2.5, True, None, "text"]}


# --- a large file is parsed as it is read (issue 47 item 7) -------------------------------------------


def test_a_file_parsed_as_it_is_read_builds_what_its_text_builds(tmp_path):
    path = tmp_path / "large.yaml"
    for source in sorted(bundled_cassette_dir().rglob("*.yaml"))[:5]:
        text = source.read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        assert safe_yaml.load_yaml_file(path, path.stat().st_size) == load_yaml(text), source


@pytest.mark.parametrize("at", [1024 * 1024 - 1, 1024 * 1024, 3])
def test_an_anchor_and_an_alias_are_found_wherever_the_reads_split_them(tmp_path, at):
    """The file is read a mebibyte at a time: "&a" or "*a" may straddle two reads."""
    text = "x" * at + "&a y\n" + "z" * (2 * 1024 * 1024) + "*a\n"
    path = tmp_path / "split.yaml"
    path.write_text(text)
    assert safe_yaml._may_alias(text) and safe_yaml._file_may_alias(path)
    path.write_text(text.replace("*a", "a"))
    assert not safe_yaml._file_may_alias(path)
