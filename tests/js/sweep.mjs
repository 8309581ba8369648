// The sweep view of the JavaScript client matrix: every client call of matrix.mjs at every position
// of the tool-call sweep, in buggy and fixed, classed by what the client did, and drawn as a picture.
//
//   node tests/js/sweep.mjs URL                              print the view as JSON
//   node tests/js/sweep.mjs URL --write docs/typescript.md   write the page's part and its picture
//
// URL is a running `mockllama serve`. The positions are the ones it serves (NAME@1 ... NAME@LAST in
// /_mockllama/scenarios.json); each cell is matrix.mjs's own measure of one call, selected by header.
// tests/clients/test_js_clients.py compares a fresh view with the page and the picture.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CALLS, measure, version } from "./matrix.mjs";
import { sweepSvg } from "./sweep-svg.mjs";

export const SWEEP = "tool-call";
export const BEHAVIOURS = ["buggy", "fixed"];
export const BEGIN = "<!-- js-sweep:begin -->";
export const END = "<!-- js-sweep:end -->";
const PICTURE = "images/typescript-sweep.svg"; // beside the page
const PACKAGES = ["openai", "ai", "@ai-sdk/openai"];

// What a client did with a reply: the first class whose test fits matrix.mjs's row for the cell.
export const OUTCOMES = [
  { name: "ran", label: "ran the tool", colour: "#a50026", fits: (row) => row.tool.startsWith("tool ran") },
  { name: "threw", label: "threw (or streamText ended in error)", colour: "#9e9e9e",
    fits: (row) => row.tool.startsWith("threw") || row.reports === "error" },
  { name: "noticed", label: "noticed the cut", colour: "#1a9850",
    fits: (row) => /\b(incomplete|length)\b/.test(row.reports) },
  { name: "refused", label: "refused the call (arguments do not parse)", colour: "#fee08b",
    fits: (row) => row.tool.includes("tool not run") },
  { name: "call", label: "handed over the call as finished (arguments parse)", colour: "#f46d43",
    fits: (row) => /\barguments parse\b/.test(row.tool) || row.tool.includes("tool call, not run") },
  { name: "broken-call", label: "handed over the call as finished (arguments do not parse)", colour: "#fdae61",
    fits: (row) => row.tool.includes("arguments do not parse") },
  { name: "text", label: "took the text for a finished reply", colour: "#74add1", fits: () => true },
];
// Taking a cut call for a whole one: running it, or handing it over as finished with arguments that parse.
const TAKEN = ["ran", "call"];

export function outcome(row) {
  return OUTCOMES.find(({ fits }) => fits(row)).name;
}

/** How a failing row failed, in words: `threw ToolChoiceViolationError`, or streamText's error ending. */
function failure(row) {
  const thrown = row.tool.match(/^threw (\w+)/)?.[1];
  if (thrown) return `threw ${thrown}`;
  const rejected = row.tool.match(/\b(AI_\w+)/)?.[1];
  return `ended in finishReason "error"${rejected ? ` (${rejected} to onError)` : ""}`;
}

/**
 * Every client call at every position and behaviour: cells[call][behaviour] holds an outcome per
 * position, and errors[call][behaviour] how each cell that failed failed (null elsewhere).
 */
export async function run(root) {
  // the sweep is one entry of the page's data: its positions first..last, and the last one's request
  const stories = await (await fetch(`${root}/_mockllama/scenarios.json`)).json();
  const sweep = stories.find(({ name, kind }) => name === SWEEP && kind === "sweep");
  if (!sweep) throw new Error(`${root} serves no sweep named ${SWEEP}`);
  const positions = Array.from({ length: sweep.last - sweep.first + 1 }, (_, i) => sweep.first + i);
  const requests = Object.fromEntries(
    positions.map((position) => [`${SWEEP}@${position}`, { ...sweep.request, max_output_tokens: position }]));
  const cells = {};
  const errors = {};
  for (const call of CALLS) {
    cells[call] = {};
    errors[call] = {};
    for (const behaviour of BEHAVIOURS) {
      cells[call][behaviour] = [];
      errors[call][behaviour] = [];
      for (const position of positions) {
        const name = `${SWEEP}@${position}`;
        const row = await measure(root, call, name, behaviour, requests[name]);
        const did = outcome(row);
        cells[call][behaviour].push(did);
        errors[call][behaviour].push(did === "threw" ? failure(row) : null);
      }
    }
  }
  return { positions, last: positions.at(-1), cells, errors };
}

/** 1-7, 9, 30-36: positions in order, as runs. */
function spans(positions) {
  const runs = [];
  for (const position of positions) {
    const run = runs.at(-1);
    if (run && run[1] === position - 1) run[1] = position;
    else runs.push([position, position]);
  }
  return runs.map(([first, last]) => (first === last ? `${first}` : `${first}-${last}`)).join(", ");
}

function plain(call) {
  return call.replaceAll("`", "");
}

/** The facts, in a few sentences: who takes a cut call for a whole one, then each client along the sweep. */
export function sentences({ positions, last, cells, errors }) {
  const label = Object.fromEntries(OUTCOMES.map((o) => [o.name, o.label]));
  const lines = [];
  for (const behaviour of BEHAVIOURS) {
    const taken = CALLS.map((call) => [call, positions.filter((position, i) =>
      position < last && TAKEN.includes(cells[call][behaviour][i]))]).filter(([, at]) => at.length);
    lines.push(taken.length
      ? `- **${behaviour}**: a cut call is taken for a whole one (run, or handed over as finished with arguments `
        + `that parse) by ${taken.map(([call, at]) => `${call} at ${spans(at)}`).join("; ")}.`
      : `- **${behaviour}**: no client takes a cut call for a whole one, at any position before ${last}.`);
  }
  for (const call of CALLS) {
    const along = BEHAVIOURS.map((behaviour) => {
      const by = new Map();
      cells[call][behaviour].forEach((name, i) => {
        const error = errors[call][behaviour][i];
        const what = error ?? label[name];
        by.set(what, [...(by.get(what) ?? []), positions[i]]);
      });
      return `on ${behaviour}, ${[...by].map(([what, at]) => `${spans(at)} ${what}`).join("; ")}`;
    });
    lines.push(`- ${call}: ${along.join(". And ")}.`);
  }
  return lines;
}

export function markdown(view) {
  return [
    `Generated by \`node tests/js/sweep.mjs URL --write docs/typescript.md\` with ${PACKAGES.map(
      (name) => `${name} ${version(name)}`).join(", ")}: ${CALLS.length} client calls, ${view.positions.length} `
      + `positions of \`${SWEEP}\`, ${BEHAVIOURS.join(" and ")}.`,
    "",
    `![Each JavaScript client call at every position of the ${SWEEP} sweep, in ${BEHAVIOURS.join(" and ")}](${PICTURE})`,
    "",
    ...sentences(view),
  ].join("\n");
}

export function picture(view) {
  return sweepSvg({
    ...view,
    title: `What each JavaScript client does with ${SWEEP} cut at every position`,
    sweep: SWEEP,
    behaviours: BEHAVIOURS,
    clients: CALLS.map(plain),
    cells: Object.fromEntries(CALLS.map((call) => [plain(call), view.cells[call]])),
    outcomes: OUTCOMES,
  });
}

function replacePart(document, part) {
  const start = document.indexOf(BEGIN);
  const stop = document.indexOf(END);
  if (start < 0 || stop < start) throw new Error(`the document has no ${BEGIN} ... ${END} markers`);
  return `${document.slice(0, start + BEGIN.length)}\n${part}\n${document.slice(stop)}`;
}

async function main(args) {
  const [root, flag, path] = args;
  if (!root || (flag && (flag !== "--write" || !path))) {
    console.error("usage: node tests/js/sweep.mjs URL [--write FILE]");
    process.exit(2);
  }
  const started = performance.now();
  const view = await run(root.replace(/\/+$/, ""));
  const made = { ...view, outcomes: OUTCOMES.map(({ name, label }) => ({ name, label })), markdown: markdown(view),
    svg: picture(view), picture: PICTURE };
  console.error(`measured ${CALLS.length} calls × ${view.positions.length} positions × ${BEHAVIOURS.length} `
    + `behaviours in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (!flag) {
    console.log(JSON.stringify(made));
    return;
  }
  writeFileSync(path, replacePart(readFileSync(path, "utf8"), made.markdown));
  writeFileSync(join(dirname(path), PICTURE), made.svg);
  console.error(`wrote the sweep view into ${path} and ${join(dirname(path), PICTURE)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
