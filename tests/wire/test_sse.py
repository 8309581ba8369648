"""Server-Sent Events split and parsed as the SSE format says, whatever the framing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._streaming import SSEDecoder

from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios, patched_cassette_dir
from mockllama.wire import sse

LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "event: a",
                "event: x  ",
                "event:b ",
                "data: {}",
                "data:1",
                "data:  2",
                "data: [DONE]",
                "",
                "id: 7",
                ": comment",
            ]
        ),
        st.text(alphabet="ab: \n{}", max_size=12),
    ),
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=5), st.booleans())
def test_blocks_join_back_to_the_body_and_each_ends_at_its_first_blank_line(blocks, cut):
    body = "".join("\n".join(lines) + "\n\n" for lines in blocks).encode()
    body = body[:-1] if cut and body else body
    split = sse.split_blocks(body)
    assert b"".join(split) == body
    assert all(sse.BLOCK_END not in block[:-1] for block in split)
    assert all(block.endswith(sse.BLOCK_END) for block in split[:-1])


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_a_block_s_name_is_its_last_event_line_and_its_data_every_data_line(lines):
    raw = ("\n".join(lines) + "\n\n").encode()
    event = sse.parse_block(raw)
    lines = raw.decode().split("\n")
    names = [line[len("event:") :].strip() for line in lines if line.startswith("event:")]
    data = [line[len("data:") :].removeprefix(" ") for line in lines if line.startswith("data:")]
    assert event == (names[-1] if names else None, "\n".join(data), raw)


def test_llama_server_s_framing_is_read_by_the_same_rule():
    raw = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":" x"}\n\n'
    assert sse.parse_block(raw) == (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","delta":" x"}',
        raw,
    )
    assert sse.parse_block(b"event:  spaced \ndata:  two\n\n")[:2] == ("spaced", " two")
    assert sse.parse_stream(raw + b"data: [DONE]\n\n")[1].json() is None


# Data as JSON might hold it: values, white space around them, text that is not JSON, a BOM.
DATA = st.one_of(
    st.from_regex(r"\A[ \t\n]?(\{\}|\[\]|\[1, ?2\]|\"a\"|-?[0-9.e+]{1,4}|NaN|true|nul|\[DONE\])[ \t\n]?\Z"),
    st.text(alphabet='{}[]":,0-9 \ufeffabn', max_size=10),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    ).map(json.dumps),
)


@settings(max_examples=600, deadline=None)
@given(DATA)
def test_json_or_none_is_json_loads_with_none_where_it_fails(data):
    try:
        expected = json.loads(data)
    except ValueError:
        expected = None
    got = sse.json_or_none(data)
    assert got == expected or (got != got and expected != expected)  # NaN is not equal to itself


def test_json_nested_too_deeply_to_build_is_none_not_a_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    assert sse.json_or_none(deep) is None
    assert sse.Event("x", deep, b"").json() is None


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=5), st.booleans())
def test_payloads_are_the_events_json_from_the_decoded_text(blocks, cut):
    body = "".join("\n".join(lines) + "\n\n" for lines in blocks).encode()
    body = body[:-1] if cut and body else body
    assert sse.payloads(body.decode()) == [event.json() for event in sse.parse_stream(body)]


def test_payloads_of_every_recorded_stream_are_its_events_json():
    streams = [
        interaction.body
        for directory in (bundled_cassette_dir(), patched_cassette_dir())
        for scenario in load_scenarios([directory]).values()
        for interaction in scenario.interactions
        if interaction.is_event_stream
    ]
    assert len(streams) > 20
    for body in streams:
        assert sse.payloads(body.decode()) == [event.json() for event in sse.parse_stream(body)]


# Reading a stream as a client does (issue 55 item 2): the openai SDK's own decoder is the reference.

FIELDS = st.one_of(
    st.sampled_from(
        [
            "event: response.completed",
            "event:response.incomplete",
            "event: x ",
            "event:",
            "data: {}",
            "data:1",
            "data:  2",
            "data",
            "data: [DONE]",
            "data: [DONE] trailing",
            "id: 7",
            "id",
            "retry: 10",
            "retry: x",
            ": comment",
            ":",
            "other: field",
            "",
        ]
    ),
    st.text(alphabet="abdt: {}[]é", max_size=8),
)
ENDS = st.sampled_from(["\n", "\r", "\r\n"])


def _sdk_events(chunks: list[bytes]) -> list[tuple[str | None, str]]:
    """What the openai SDK's stream reads: each event its decoder yields, up to the first whose
    data starts with [DONE], which ends the stream (openai/_streaming.py, Stream.__stream__)."""
    events = []
    for event in SSEDecoder().iter_bytes(iter(chunks)):
        events.append((event.event, event.data))
        if event.data.startswith("[DONE]"):
            break
    return events


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(FIELDS, ENDS), max_size=14), st.data())
def test_a_stream_is_read_as_the_openai_sdk_reads_it_whatever_its_line_ends(lines, data):
    body = "".join(line + end for line, end in lines).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=4)))
    chunks = [body[start:end] for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    read = sse.read_events(body)
    assert [(event.name, event.data) for event in read] == _sdk_events(chunks)
    assert b"".join(event.raw for event in read) == body[: len(b"".join(event.raw for event in read))]


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_every_line_end_the_specification_allows_ends_a_line(end):
    body = end.join([b"event: response.completed", b'data: {"a":1}', b"", b"data: 2", b"data: 3", b"", b""])
    assert [(event.name, event.data) for event in sse.read_events(body)] == [
        ("response.completed", '{"a":1}'),
        (None, "2\n3"),
    ]


def test_done_ends_the_stream_and_is_read_with_its_event_line():
    body = b"event: response.completed\ndata: [DONE]\n\nevent: response.incomplete\ndata: {}\n\n"
    assert [(event.name, event.data) for event in sse.read_events(body)] == [("response.completed", "[DONE]")]
    assert _sdk_events([body]) == [("response.completed", "[DONE]")]


def test_an_event_cut_off_before_its_blank_line_is_never_read():
    assert sse.read_events(b"data: 1\n\ndata: 2\n") == [sse.Event(None, "1", b"data: 1\n\n")]


def test_every_recorded_stream_is_read_as_its_blocks_are_parsed():
    """The replay path splits recordings by their LF framing; a client reads the same events."""
    streams = [
        interaction.body
        for directory in (bundled_cassette_dir(), patched_cassette_dir())
        for scenario in load_scenarios([directory]).values()
        for interaction in scenario.interactions
        if interaction.is_event_stream
    ]
    for body in streams:
        blocks = [event for event in sse.parse_stream(body) if event.data or event.name]
        assert [(e.name, e.data) for e in sse.read_events(body)] == [(e.name, e.data) for e in blocks]
