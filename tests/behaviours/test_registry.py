"""Behaviours are declared once, in a registry: a behaviour registered there is served under its own
path prefix, taken in the X-Mockllama-Behaviour header, offered by `serve --behaviour` and shown
on the teaching page, with nothing else to edit."""

from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

from mockllama.app import ServeOptions, create_app
from mockllama.behaviours.registry import BEHAVIOURS, FIRST, Behaviour, register, unregister
from mockllama.behaviours.reply import recorded_reply
from mockllama.cli import main
from mockllama.commands.serve import serve
from mockllama.server.background import BackgroundServer
from mockllama.teaching.explain import shown_behaviours
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS

COUNT = request_bytes(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False))


def _echoed_loudly(interaction, scenario):
    """A stand-in behaviour: the recording, a JSON body marked ``"loud": true``, so a reply shows it
    was applied."""
    reply = recorded_reply(interaction)
    if reply.events is not None or not isinstance(interaction.body_json, dict):
        return reply
    body = json.dumps({**interaction.body_json, "loud": True}).encode()
    return dataclasses.replace(reply, body=body)


@pytest.fixture
def loud():
    """A behaviour registered for one test only."""
    behaviour = register(Behaviour("loud", "the recording, in capitals", _echoed_loudly))
    yield behaviour
    unregister("loud")


@pytest.fixture
def server(loud):
    with BackgroundServer(create_app(SCENARIOS)) as running:
        yield running


def test_the_first_three_come_first_and_others_after_in_the_order_registered(loud):
    register(Behaviour("aaa-later", "registered after loud", _echoed_loudly))
    try:
        listed = list(BEHAVIOURS)
        assert listed[: len(FIRST)] == list(FIRST) and listed[-2:] == ["loud", "aaa-later"]
    finally:
        unregister("aaa-later")


def test_a_registered_behaviour_is_served_under_its_own_path_prefix(server):
    status, headers, body = call(server.url, "POST", "/loud/v1/responses", COUNT)
    assert status == 200 and headers["X-Mockllama-Behaviour"] == "loud"
    assert json.loads(body)["loud"] is True


def test_a_registered_behaviour_is_taken_in_the_header_and_named_when_one_is_unknown(server):
    status, headers, _ = call(server.url, "POST", "/v1/responses", COUNT, {"X-Mockllama-Behaviour": "loud"})
    assert status == 200 and headers["X-Mockllama-Behaviour"] == "loud"
    status, _, body = call(server.url, "POST", "/v1/responses", COUNT, {"X-Mockllama-Behaviour": "quiet"})
    assert status == 400 and f"use one of: {', '.join(BEHAVIOURS)}." in json.loads(body)["error"]["message"]
    assert "loud" in BEHAVIOURS


def test_a_registered_behaviour_is_a_choice_of_serve_behaviour(loud):
    option = next(param for param in serve.params if param.name == "behaviour")
    assert option.make_metavar(click.Context(serve)) == "[" + "|".join(BEHAVIOURS) + "]"
    assert "|loud" in option.make_metavar(click.Context(serve))
    assert option.type.convert("loud", option, None) == "loud"
    assert ServeOptions(behaviour="loud").behaviour == "loud"


def test_a_registered_behaviour_is_a_column_of_the_teaching_page(server):
    status, _, body = call(server.url, "GET", "/_mockllama/scenarios.json")
    told = next(story for story in json.loads(body) if story["name"] == "text-cut-8")
    assert status == 200 and list(told["bodies"]) == shown_behaviours() and "loud" in told["bodies"]


def test_once_unregistered_it_is_offered_nowhere():
    assert "loud" not in BEHAVIOURS
    result = CliRunner().invoke(main, ["serve", "--behaviour", "loud"])
    assert result.exit_code == 2 and "unknown behaviour 'loud'" in result.output


@pytest.mark.parametrize("name", ["Loud", "two words", "fixed/v2", ""])
def test_a_name_that_is_no_path_segment_is_refused(name):
    with pytest.raises(ValueError, match="path segment"):
        register(Behaviour(name, "-", _echoed_loudly))


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="registered already"):
        register(Behaviour("fixed", "another fixed", _echoed_loudly))


def test_explain_still_fits_80_columns_with_another_behaviour(loud):
    from mockllama.teaching.explain import render, story

    shown = [click.unstyle(line) for line in render(story(SCENARIOS["text-cut-8"]))]  # as piped
    assert any(line.startswith("non-streaming body") and "loud" in line.split() for line in shown)
    assert max(len(line) for line in shown) <= 80
