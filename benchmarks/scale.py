"""How mockllama's costs grow with the number of recordings: ``python -m benchmarks --scale``.

Synthetic but well-formed cassette directories are made from the bundled recordings: each copy
is a real recording whose prompts carry a distinct marker, so every copy is a scenario of its
own that matches only its own requests. The copies are written by vcrpy's own YAML serializer.
For each size the bench measures the start of ``mockllama serve --cassettes DIR`` to its first
200 (the first start, which builds the index, and later ones) and the server's peak RSS in each,
the ``mockllama scenarios`` command's time, the p50 of a matched
request at one connection (wrk), and the latency of a 404 (no recording matches: the
nearest-scenario search scans the recorded requests). The bundled recordings are the baseline
row. Last, the pytest plugin's session start-up with the largest directory up to 1,000 extra
scenarios, against none, with no other pytest plugin loaded.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from vcr.serializers import yamlserializer

from benchmarks.harness import (
    PLUGIN_TEST,
    TEXT,
    Contender,
    mockllama_command,
    peak_rss_mb,
    pytest_session_seconds,
    request_body,
    run_wrk,
    start_contender,
)
from mockllama.recordings.cassettes import bundled_cassette_dir, cassette_files, load_cassette
from mockllama.recordings.safe_yaml import load_yaml
from mockllama.wire.routes import RESPONSES_PATH

PLUGIN_EXTRA = 1_000
MARKER = "SYNTH000000"  # replaced by each copy's number, digit for digit, in the serialized text


# --- making the directories -----------------------------------------------------------------------


def _marked_content(content):
    """A message's content with the marker appended to its text."""
    if isinstance(content, str):
        return f"{content} ({MARKER})"
    if isinstance(content, list):
        return [
            {**part, "text": _marked_content(part["text"])}
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else part
            for part in content
        ]
    return content


def _marked_messages(messages: list) -> list:
    """Every user message marked, so the turns of one conversation still share their history."""
    return [
        {**m, "content": _marked_content(m.get("content"))}
        if isinstance(m, dict) and m.get("role", "user") == "user"
        else m
        for m in messages
    ]


def _marked_body(body):
    if isinstance(body, str):
        return json.dumps(_marked_body(json.loads(body)))
    body = dict(body)
    if isinstance(body.get("input"), str):
        body["input"] = _marked_content(body["input"])
    elif isinstance(body.get("input"), list):
        body["input"] = _marked_messages(body["input"])
    if isinstance(body.get("messages"), list):
        body["messages"] = _marked_messages(body["messages"])
    return body


def _templates() -> list[tuple[str, str]]:
    """(name, serialized cassette with the marker) for every bundled recording made only of JSON
    POST requests: the ones a copy with another prompt is a scenario of its own for."""
    templates = []
    for path in cassette_files(bundled_cassette_dir()):
        scenario = load_cassette(path)
        if not all(i.method == "POST" and isinstance(i.request_json, dict) for i in scenario.interactions):
            continue
        data = load_yaml(path.read_text(encoding="utf-8"))
        for interaction in data["interactions"]:
            request = interaction["request"]
            request["body"] = _marked_body(request["body"])
        text = yamlserializer.serialize(data)
        if MARKER in text:
            templates.append((path.stem, text))
    return templates


def make_cassette_dir(directory: Path, count: int) -> Path:
    """``count`` distinct scenarios in ``directory``, copies of the bundled recordings in turn."""
    directory.mkdir(parents=True, exist_ok=True)
    templates = _templates()
    for number in range(count):
        name, text = templates[number % len(templates)]
        copy = f"SYNTH{number:06d}"
        (directory / f"{name}-{number:06d}.yaml").write_text(text.replace(MARKER, copy), encoding="utf-8")
    return directory


def matched_request(directory: Path) -> bytes:
    """The non-streamed /v1/responses request of the first copy of ``text-cut-8`` (or any copy)."""
    files = sorted(directory.glob("text-cut-8-*.yaml")) or cassette_files(directory)
    scenario = load_cassette(files[0])
    interaction = next(i for i in scenario.interactions if i.path == RESPONSES_PATH and not i.stream)
    return interaction.request_raw or json.dumps(interaction.request_json).encode()


def unmatched_request(matched: bytes) -> bytes:
    """The same request with a prompt no recording holds."""
    body = json.loads(matched)
    body["input"] = "A prompt that no recording holds."
    return json.dumps(body).encode()


# --- measuring ------------------------------------------------------------------------------------


@dataclass
class ScaleRow:
    label: str
    scenarios: int
    interactions: int
    cold_start_s: float
    cold_rss_mb: float  # the first start's peak: it reads every cassette and writes the index
    start_s: float
    rss_mb: float
    scenarios_cmd_s: float
    matched_p50_ms: float
    first_miss_ms: float
    miss_ms: float
    miss_bytes: int


def miss_latency(port: int, body: bytes, count: int = 20) -> tuple[float, float, int]:
    """Milliseconds of the server's first 404 (the route's fingerprints gathered then, unless the server
    did so between requests after its start, as it does from ``warming.PREPARE_AFTER_S``) and the
    median of ``count`` over one kept-alive connection, and the size of its message."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    times, size = [], 0
    try:
        for _ in range(count):
            started = time.perf_counter()
            connection.request("POST", RESPONSES_PATH, body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
            times.append((time.perf_counter() - started) * 1000)
            if response.status != 404:
                raise RuntimeError(f"expected a 404 for a prompt no recording holds, got {response.status}")
            size = len(payload)
    finally:
        connection.close()
    return times[0], statistics.median(times), size


def scenarios_command_seconds(directory: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mockllama", "scenarios", "--cassettes", str(directory)],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def _count(directory: Path) -> tuple[int, int]:
    files = cassette_files(directory)
    interactions = sum(1 for path in files for _ in load_yaml(path.read_text(encoding="utf-8"))["interactions"])
    return len(files), interactions


def measure_dir(label: str, directory: Path, matched: bytes, port_for, duration: int, starts: int = 3) -> ScaleRow:
    """Every figure for one cassette directory; the server is started ``starts`` times (median)."""
    port = port_for()
    server = Contender("mockllama", mockllama_command(port, "--cassettes", str(directory)), port)
    times, process, cold_rss = [], None, 0.0
    try:
        for attempt in range(starts + 1):
            # The first start reads every cassette, on every core as for a user (recordings.parallel),
            # and writes the index; the later ones read the index, on the server's own core.
            process, seconds = start_contender(server, body=matched, timeout=600, pinned=attempt > 0)
            times.append(seconds)
            if attempt == 0:
                cold_rss = peak_rss_mb(process)  # the server's own; its reading workers are gone by now
            if attempt < starts:
                process.terminate()
                process.wait(timeout=20)
        p50 = statistics.median(run_wrk(server.url, matched, 1, duration)[1] for _ in range(3))  # single runs vary
        first_miss_ms, miss_ms, miss_bytes = miss_latency(port, unmatched_request(matched))
        rss = peak_rss_mb(process)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=20)
    scenarios, interactions = _count(directory)
    return ScaleRow(
        label,
        scenarios,
        interactions,
        times[0],
        cold_rss,
        statistics.median(times[1:]),
        rss,
        scenarios_command_seconds(directory),
        p50,
        first_miss_ms,
        miss_ms,
        miss_bytes,
    )


def plugin_session_seconds(work: Path, body: bytes, extra: Path | None, runs: int = 3) -> float:
    """Wall time of a pytest session whose one test starts the plugin's server and sends one request,
    with no other plugin loaded (as benchmarks.startup runs it)."""
    test_dir = work / "plugin-session"
    test_dir.mkdir(exist_ok=True)
    test_file = test_dir / "test_session.py"
    test_file.write_text(PLUGIN_TEST.format(body=body))
    options = ("-p", "mockllama.pytest_plugin", *(() if extra is None else ("--mockllama-cassettes", str(extra))))
    alone = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return statistics.median(pytest_session_seconds(test_file, *options, env=alone) for _ in range(runs))


def scale_table(rows: list[ScaleRow], plugin: dict[str, float]) -> str:
    lines = [
        "| recordings | scenarios | interactions | first start (no index yet) | its peak RSS | "
        "start to first 200 | peak RSS | `scenarios` command | matched p50 (1 conn) | first 404 | "
        "404 latency (median) | 404 size |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r.label} | {r.scenarios:,} | {r.interactions:,} | {r.cold_start_s * 1000:,.0f} ms | "
        f"{r.cold_rss_mb:.0f} MB | {r.start_s * 1000:,.0f} ms | {r.rss_mb:.0f} MB | "
        f"{r.scenarios_cmd_s:.2f} s | {r.matched_p50_ms:.2f} ms | {r.first_miss_ms:,.0f} ms | "
        f"{r.miss_ms:.1f} ms | {r.miss_bytes:,} B |"
        for r in rows
    ]
    lines += ["", "| pytest plugin session (one test, one request) | wall time |", "| --- | --- |"]
    lines += [f"| {label} | {seconds:.2f} s |" for label, seconds in plugin.items()]
    return "\n".join(lines)


def run_scale(sizes: tuple[int, ...], duration: int, port_for) -> str:
    with tempfile.TemporaryDirectory(prefix="mockllama-scale-") as temp:
        work = Path(temp)
        # A cassette index of this run's own, so that the first start of each directory reads
        # every cassette (the servers, the scenarios command and pytest inherit it).
        os.environ["MOCKLLAMA_INDEX_DIR"] = str(work / "index")
        bundled_body = request_body(*TEXT)
        rows = [measure_dir("bundled", bundled_cassette_dir(), bundled_body, port_for, duration)]
        print("measured the bundled recordings", file=sys.stderr, flush=True)
        dirs = {}
        for size in sizes:
            directory = make_cassette_dir(work / f"scale-{size}", size)
            dirs[size] = directory
            rows.append(measure_dir(f"synthetic {size:,}", directory, matched_request(directory), port_for, duration))
            print(f"measured {size:,} synthetic scenarios", file=sys.stderr, flush=True)
        plugin_size = max((size for size in sizes if size <= PLUGIN_EXTRA), default=min(sizes))
        body = matched_request(dirs[plugin_size])
        plugin = {
            "bundled recordings only": plugin_session_seconds(work, bundled_body, None),
            f"plus {plugin_size:,} extra scenarios": plugin_session_seconds(work, body, dirs[plugin_size]),
        }
        print("measured the pytest plugin's session start-up", file=sys.stderr, flush=True)
    return scale_table(rows, plugin)


def parse_sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part.replace("_", "").replace(",", "")) for part in text.split())
    if not sizes or any(size < 1 for size in sizes):
        raise ValueError("sizes are positive whole numbers")
    return sizes
