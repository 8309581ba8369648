// The teaching page: renders /_mockllama/scenarios.json (the same data as `mockllama explain`).
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// Longest common subsequence of two line lists: which lines of each side have no partner.
function changedLines(left, right) {
  const n = left.length, m = right.length;
  const table = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i][j] = left[i] === right[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const leftChanged = new Set(), rightChanged = new Set();
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (left[i] === right[j]) { i++; j++; }
    else if (table[i + 1][j] >= table[i][j + 1]) leftChanged.add(i++);
    else rightChanged.add(j++);
  }
  while (i < n) leftChanged.add(i++);
  while (j < m) rightChanged.add(j++);
  return [leftChanged, rightChanged];
}

function bodyPane(behaviour, lines, changed) {
  const pre = el("pre", { class: `body ${behaviour}`, "data-behaviour": behaviour });
  lines.forEach((line, index) => pre.append(el("span", changed.has(index) ? { class: "changed" } : {}, line)));
  return pre;
}

function eventsList(behaviour, events, other) {
  const list = el("ol", { class: `events ${behaviour}` });
  events.forEach((event, index) => list.append(el("li", event !== other[index] ? { class: "changed" } : {}, event)));
  return list;
}

function fieldsTable(story) {
  const behaviours = Object.keys(story.bodies);
  const table = el("table", { class: "fields" });
  table.append(el("tr", {}, el("th", {}, "field"), ...behaviours.map((b) => el("th", {}, b))));
  for (const row of story.rows) {
    const cells = behaviours.map((b) => {
      const differs = row.values[b] !== row.values.buggy || (b === "buggy" && row.differs);
      return el("td", { class: differs ? `diff ${b}` : b }, row.values[b]);
    });
    table.append(el("tr", row.differs ? { class: "differs" } : {}, el("th", {}, row.field), ...cells));
  }
  return table;
}

function describeInput(input) {
  if (typeof input === "string") return input;
  const user = (input || []).filter((item) => item.role === "user").map((item) => item.content);
  return user.length ? String(user[user.length - 1]) : JSON.stringify(input);
}

function requestBlock(request) {
  const tools = (request.tools || []).map((tool) => tool.name).join(", ");
  const summary = el("summary", {}, "POST /v1/responses: ", el("code", {}, JSON.stringify(describeInput(request.input))),
    ", max_output_tokens ", el("code", {}, String(request.max_output_tokens)),
    tools ? ", tools " : "", tools ? el("code", {}, tools) : null, " (full request)");
  return el("details", { class: "request" }, summary, el("pre", {}, JSON.stringify(request, null, 2)));
}

function verdictLine(story) {
  const meaning = story.cut ? "the reply was cut off" : "the reply finished";
  return el("p", { class: "verdict" }, "Chat twin ", el("code", {}, "finish_reason"), ": ",
    el("span", { class: `tag ${story.cut ? "cut" : "ok"}` }, story.twin_finish_reason), ` (${meaning}).`);
}

function responsesSection(story) {
  const buggyLines = JSON.stringify(story.bodies.buggy, null, 2).split("\n");
  const fixedLines = JSON.stringify(story.bodies.fixed, null, 2).split("\n");
  const [buggyChanged, fixedChanged] = changedLines(buggyLines, fixedLines);
  const events = story.last_events;
  return [
    requestBlock(story.request),
    verdictLine(story),
    fieldsTable(story),
    el("div", { class: "side-by-side" },
      el("div", {}, el("h3", {}, el("span", { class: "label-buggy" }, "buggy"), " (llama-server as it is)"),
        bodyPane("buggy", buggyLines, buggyChanged)),
      el("div", {}, el("h3", {}, el("span", { class: "label-fixed" }, "fixed"), " (a correct server)"),
        bodyPane("fixed", fixedLines, fixedChanged))),
    events.buggy ? el("div", { class: "side-by-side" },
      el("div", {}, el("h3", {}, "stream, last events: ", el("span", { class: "label-buggy" }, "buggy")),
        eventsList("buggy", events.buggy, events.fixed)),
      el("div", {}, el("h3", {}, "stream, last events: ", el("span", { class: "label-fixed" }, "fixed")),
        eventsList("fixed", events.fixed, events.buggy))) : null,
    variantsList(story),
    el("p", { class: "advice" }, el("b", {}, "What a client should check: "), story.advice),
    el("p", { class: "advice javascript" }, el("b", {}, "In JavaScript: "), story.javascript_advice),
  ];
}

function variantsList(story) {
  if (!story.variants.length) return null;
  const items = story.variants.map((v) => el("li", {}, el("code", {}, `/${v.name}/v1`), ` ${v.server}: body status `,
    el("code", {}, v.status), v.terminal ? ", stream " : "", v.terminal ? el("code", {}, v.terminal) : null,
    ` (${v.citation})`));
  return el("details", { class: "variants" },
    el("summary", {}, "Other servers' variants: the same reply with their truncation signals"), el("ul", {}, ...items));
}

// A sweep: one request recorded at every token limit. One position at a time, chosen with the slider,
// the strip or the arrow keys; the strip shows every position at once, coloured by what it holds.
function positionKind(row) {
  if (row.cut === false) return "finished";
  if (row.parses === true) return "parses";
  if (row.parses === false) return "unparsed";
  return "text";
}

const POSITION_KINDS = {
  text: "cut, not a call yet (text or reasoning)",
  unparsed: "cut call, arguments do not parse",
  parses: "cut call, arguments parse",
  finished: "finished",
};

function sweepSection(story, section) {
  const rows = story.positions;
  const finished = rows.slice().reverse().find((row) => row.cut === false);
  const slider = el("input", { type: "range", min: "0", max: String(rows.length - 1), value: "0", step: "1",
    class: "sweep-slider", "aria-label": `position in ${story.name}` });
  const cells = rows.map((row, index) => {
    const cell = el("button", { type: "button", class: `cell ${positionKind(row)}`, "data-limit": String(row.limit),
      title: `${row.limit}: ${POSITION_KINDS[positionKind(row)]}` }, String(row.limit));
    cell.addEventListener("click", () => show(index));
    return cell;
  });
  const view = el("div", { class: "sweep-view" });
  const legend = el("p", { class: "sweep-legend" }, ...Object.entries(POSITION_KINDS).map(([kind, words]) =>
    el("span", {}, el("span", { class: `swatch ${kind}` }), words)));

  function saidCell(row, behaviour) {
    const word = row.said[behaviour] ?? "-";
    // At a cut, a status that says what the finished reply says hides the cut; one that differs tells it.
    const hides = row.cut && finished && word === finished.said[behaviour];
    const kind = !row.cut ? "" : hides ? "hides" : "tells";
    return el("td", { class: kind, "data-behaviour": behaviour }, word);
  }

  function show(index) {
    const row = rows[index];
    slider.value = String(index);
    cells.forEach((cell, i) => cell.classList.toggle("current", i === index));
    section.setAttribute("data-position", String(row.limit));
    const parses = row.parses === null ? "not a call" : row.parses ? "yes" : "no";
    view.replaceChildren(
      el("p", { class: "sweep-where" }, el("b", {}, `Position ${row.limit}`), ` of ${story.first}-${story.last}: `,
        row.cut ? el("span", { class: "tag cut" }, "cut by its limit") :
          row.cut === false ? el("span", { class: "tag ok" }, "finished") : el("span", { class: "tag other" }, "unknown"),
        " ", el("code", {}, row.output)),
      el("pre", { class: "so-far", "data-limit": String(row.limit) }, row.so_far),
      el("table", { class: "fields sweep-said" },
        el("tr", {}, el("th", {}, "arguments parse as JSON"), ...story.behaviours.map((b) => el("th", {}, b))),
        el("tr", {}, el("td", { class: row.parses && row.cut ? "hides" : "" }, parses),
          ...story.behaviours.map((b) => saidCell(row, b)))));
  }

  slider.addEventListener("input", () => show(Number(slider.value)));
  section.showLimit = (limit) => {
    const index = rows.findIndex((row) => row.limit === limit);
    if (index >= 0) show(index);
  };
  show(0);
  return [
    el("details", { class: "request" }, el("summary", {}, `POST ${story.endpoint}, one position a token limit `,
      el("code", {}, `${story.first}-${story.last}`), " (the finished position's request)"),
      el("pre", {}, JSON.stringify(story.request, null, 2))),
    el("p", {}, "The same request recorded at every token limit. Step through the positions with the slider, the ",
      "strip or the arrow keys, and watch what each behaviour says as the reply grows."),
    el("div", { class: "sweep-controls" }, slider), el("div", { class: "sweep-strip" }, ...cells), legend, view,
    el("p", { class: "advice" }, el("b", {}, "What the positions show: "), story.lesson),
  ];
}

function tagFor(story) {
  if (story.kind === "sweep") return el("span", { class: "tag sweep" }, `sweep ${story.first}-${story.last}`);
  if (story.kind !== "responses") return el("span", { class: "tag other" }, "as recorded");
  return el("span", { class: `tag ${story.cut ? "cut" : "ok"}` }, story.cut ? "cut off" : "finished");
}

function render(stories) {
  const list = document.getElementById("scenario-list");
  const main = document.getElementById("scenarios");
  list.replaceChildren();
  for (const story of stories) {
    const id = `scenario-${story.name}`;
    list.append(el("li", {}, el("a", { href: `#${id}` }, story.name, tagFor(story))));
    const section = el("section", { class: "scenario", id }, el("h2", {}, story.name));
    if (story.setup !== "default") {
      section.append(el("p", { class: "note" }, "Recorded from the server set-up ", el("code", {}, story.setup),
        ": its chat template differs, so it answers by prompt only under ", el("code", {}, `serve --setup ${story.setup}`),
        ", and otherwise when chosen by name."));
    }
    if (story.kind === "responses") section.append(...responsesSection(story).filter(Boolean));
    else if (story.kind === "sweep") section.append(...sweepSection(story, section));
    else section.append(el("p", { class: "note" }, `${story.endpoints.join(", ")}: ${story.note}`));
    main.append(section);
  }
  const origin = window.location.origin;
  const seed = '{"model":"x","input":"Count from 1 to 200, separated by spaces.","max_output_tokens":8,"temperature":0}';
  document.getElementById("try-commands").textContent = [
    `curl -s ${origin}/buggy/v1/responses -d '${seed}'`,
    `curl -s ${origin}/fixed/v1/responses -d '${seed}'`,
    `curl -sN ${origin}/fixed/v1/responses -d '${seed.slice(0, -1)},"stream":true}'`,
    `mockllama check ${origin}/buggy      # exits 1: cut-off replies reported "completed"`,
    `mockllama check ${origin}/fixed --probe all   # exits 0`,
    `mockllama explain text-cut-8`,
  ].join("\n");
  document.body.setAttribute("data-rendered", String(stories.length));
  showAskedPosition();
}

// #scenario-NAME@N opens a sweep at position N: a link to one cut point.
function showAskedPosition() {
  const asked = decodeURIComponent(window.location.hash.slice(1)).match(/^(scenario-.+)@(\d+)$/);
  const section = asked && document.getElementById(asked[1]);
  if (!section || !section.showLimit) return;
  section.showLimit(Number(asked[2]));
  section.scrollIntoView();
}

window.addEventListener("hashchange", showAskedPosition);

fetch("/_mockllama/scenarios.json")
  .then((response) => response.json())
  .then(render)
  .catch((error) => {
    document.getElementById("scenario-list").replaceChildren(el("li", {}, `could not load scenarios: ${error}`));
  });

// The journal: what clients sent, newest first. Polled with ?since= so each poll brings only news.
const JOURNAL_ROWS = 20;
let journalSince = 0;
const journalEntries = [];

function journalRow(entry) {
  const when = new Date(entry.time * 1000).toLocaleTimeString();
  const reply = [entry.stream ? "stream" : "body", entry.finished ? "finished" : "not finished",
    `${entry.bytes_sent} bytes`, entry.fault ? `fault ${entry.fault}` : null].filter(Boolean).join(", ");
  const body = entry.body === null ? "" : typeof entry.body === "string" ? entry.body : JSON.stringify(entry.body);
  const scenario = entry.scenario ? `${entry.scenario} (${entry.selected_by})` : "none";
  return el("tr", { class: entry.status >= 400 ? "error" : "", "data-id": String(entry.id) },
    el("td", {}, String(entry.id)), el("td", {}, when), el("td", {}, el("code", {}, `${entry.method} ${entry.path}`)),
    el("td", { title: entry.error || "" }, String(entry.status)), el("td", {}, entry.behaviour),
    el("td", {}, scenario), el("td", {}, reply), el("td", {}, el("code", { class: "sent" }, body)));
}

function pollJournal() {
  fetch(`/_mockllama/journal?since=${journalSince}`)
    .then((response) => response.json())
    .then((journal) => {
      const rows = document.getElementById("journal-rows");
      if (journal.size === 0) {
        rows.replaceChildren(el("tr", {}, el("td", { colspan: "8" }, "the journal is off (--journal-size 0)")));
        return;
      }
      journalSince = journal.last_id;
      if (!journal.entries.length) return;
      journalEntries.unshift(...journal.entries.reverse());
      journalEntries.splice(JOURNAL_ROWS);
      rows.replaceChildren(...journalEntries.map(journalRow));
    })
    .catch(() => {});  // the next poll tries again
}

pollJournal();
setInterval(pollJournal, 1000);
