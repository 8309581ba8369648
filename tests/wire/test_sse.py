"""Server-Sent Events split and parsed as the SSE format says, whatever the framing."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

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
