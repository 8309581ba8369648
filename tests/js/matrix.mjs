// The JavaScript client matrix: what openai-node and the AI SDK report for each case, on every server.
//
//   node tests/js/matrix.mjs URL                              print the page's part
//   node tests/js/matrix.mjs URL --json                       print it and the rows it is made of, as JSON
//   node tests/js/matrix.mjs URL --write docs/typescript.md   replace it between the page's markers, and
//                                                             refresh the page's included files
//
// URL is a running `mockllama serve` (its root, e.g. http://127.0.0.1:18090). The servers are every
// behaviour it serves at /NAME/v1, llama-server's own, the honest ones and each other server's variant,
// read from its page data (GET /_mockllama/scenarios.json), as is each case's recorded request. Each
// call selects its scenario with the X-Mockllama-Scenario header, so the table shows what a client does
// with a reply, whatever it sends; tests/clients/test_js_clients.py checks separately that the clients'
// own requests reach the recordings by matching alone. The request is built from the recorded one, in
// each client's ordinary options.
import { readFileSync, writeFileSync } from "node:fs";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import { OUTCOMES, outcome, short } from "./outcomes.mjs";

// tool-cut-30 beside the four asked for: its cut arguments parse, so a client may run the tool
export const CASES = ["text-cut-8", "tool-cut-20", "tool-cut-30", "text-finishes", "thinking-cut-12"];
export const BEGIN = "<!-- js-matrix:begin -->";
export const END = "<!-- js-matrix:end -->";
const PACKAGES = ["openai", "ai", "@ai-sdk/openai"];
const COLUMNS = ["client call", "scenario", "behaviours", "`status` / `finishReason`",
  "`incomplete_details` / `rawFinishReason`", "text", "tool, or what it threw"];

/** The version of an installed package, from its own package.json. */
export function version(name) {
  const url = new URL(`node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

/** A string as a short JSON literal: the rows stay one line and one width. */
function quoted(text, width = 36) {
  if (text === undefined || text === null) return "-";
  const shown = JSON.stringify(text);
  return shown.length <= width ? shown : `${shown.slice(0, width - 1)}…`;
}

/** What a thrown error says, without ids, timestamps or a stack: its class and first line. */
function thrown(err) {
  const first = String(err?.message ?? err).split("\n")[0];
  return `threw ${err?.constructor?.name ?? "error"}: ${first.length > 60 ? `${first.slice(0, 59)}…` : first}`;
}

/** The fields an event lacks, from the AI SDK's schema error: the union branch for its own type. */
function lacking(err) {
  const union = err.cause?.issues?.[0];
  const branches = union?.code === "invalid_union" ? union.errors : [err.cause?.issues ?? []];
  const own = branches.find((issues) => !issues.some((issue) => issue.path.join(".") === "type")) ?? [];
  return own.map((issue) => issue.path.join("."));
}

/** streamText's onError calls in short: the events the SDK rejected, grouped by the fields they lacked. */
function rejected(errors) {
  const invalid = errors.filter((err) => err?.name === "AI_TypeValidationError");
  const byFields = new Map();
  for (const err of invalid) {
    const fields = lacking(err).join(", ") || "?";
    const event = String(err.value?.type).replace(/^response\./, "");
    byFields.set(fields, [...new Set([...(byFields.get(fields) ?? []), event])]);
  }
  const groups = [...byFields].map(([fields, events]) => `no ${fields} on ${events.join(", ")}`);
  const summary = invalid.length ? [`${invalid.length}× AI_TypeValidationError (${groups.join("; ")})`] : [];
  return [...summary, ...errors.filter((err) => err?.name !== "AI_TypeValidationError").map(thrown)];
}

function parses(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** An openai-node Response's function_call items, in words. */
function calls(output) {
  const found = (output ?? []).filter((item) => item.type === "function_call");
  return found.map((item) => `call ${item.status}, arguments ${parses(item.arguments) ? "parse" : "do not parse"}`)
    .join("; ") || "-";
}

/**
 * What the server serves, from its page data: `behaviours`, every one it serves at /NAME/v1 (its own side by
 * side in each story's bodies, then each other server's variant); and per scenario its recorded request
 * (the non-streamed /v1/responses) and whether that reply was `cut`.
 */
export async function served(root) {
  const stories = await (await fetch(`${root}/_mockllama/scenarios.json`)).json();
  const told = stories.find(({ kind }) => kind === "responses");
  if (!told) throw new Error(`${root} serves no /v1/responses scenario`);
  return {
    behaviours: [...Object.keys(told.bodies), ...told.variants.map(({ name }) => name)],
    requests: Object.fromEntries(stories.map((s) => [s.name, s.request])),
    cut: Object.fromEntries(stories.map((s) => [s.name, s.cut])),
  };
}

/** The chat form of a recorded Responses request, as a user of chat.completions writes it. */
function chatRequest(request) {
  const input = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  const chat = {
    model: request.model,
    messages: input.map(({ role, content }) => ({ role, content })),
    max_tokens: request.max_output_tokens,
    temperature: request.temperature,
  };
  if (request.tools) {
    chat.tools = request.tools.map(({ name, description, parameters }) => ({
      type: "function", function: { name, description, parameters } }));
    chat.tool_choice = request.tool_choice;
  }
  return chat;
}

// --- openai-node --------------------------------------------------------------------------

function responseRow(response) {
  return {
    reports: response.status,
    details: response.incomplete_details?.reason ?? "null",
    text: quoted(response.output_text),
    tool: calls(response.output),
  };
}

const openaiNode = {
  "openai-node `responses.create`": async (client, request, options) =>
    responseRow(await client.responses.create(request, options)),

  "openai-node `responses.stream()`, `finalResponse()`": async (client, request, options) =>
    responseRow(await client.responses.stream(request, options).finalResponse()),

  "openai-node `responses.create({stream: true})`, iterated": async (client, request, options) => {
    const stream = await client.responses.create({ ...request, stream: true }, options);
    let last;
    let text = "";
    for await (const event of stream) {
      last = event;
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    return {
      reports: `${last.type} (${last.response?.status})`,
      details: last.response?.incomplete_details?.reason ?? "null",
      text: quoted(text),
      tool: calls(last.response?.output),
    };
  },

  "openai-node `chat.completions.create`": async (client, request, options) => {
    const completion = await client.chat.completions.create(chatRequest(request), options);
    const choice = completion.choices[0];
    const toolCalls = choice.message.tool_calls ?? [];
    return {
      reports: `finish_reason ${choice.finish_reason}`,
      details: "-",
      text: quoted(choice.message.content),
      tool: toolCalls.map((call) => `call, arguments ${parses(call.function.arguments) ? "parse" : "do not parse"}`)
        .join("; ") || "-",
    };
  },
};

// --- the AI SDK ---------------------------------------------------------------------------

/** The AI SDK's options for a recorded request: prompt or messages, the limit, tools that record a run. */
function sdkOptions(request, ran) {
  const options = { maxOutputTokens: request.max_output_tokens, temperature: request.temperature };
  if (typeof request.input === "string") options.prompt = request.input;
  else options.messages = request.input.map(({ role, content }) => ({ role, content }));
  if (request.tools) {
    options.tools = Object.fromEntries(request.tools.map(({ name, description, parameters }) => [name, tool({
      description,
      inputSchema: jsonSchema(parameters),
      execute: async () => {
        ran.push(name);
        return "done";
      },
    })]));
    options.toolChoice = request.tool_choice;
  }
  return options;
}

/** Whether a tool ran, or why it did not: a call whose input fails to parse is marked invalid. */
function toolOutcome(content, ran) {
  if (ran.length) return `tool ran ${ran.length}×`;
  const calls = content.filter((part) => part.type === "tool-call");
  return calls.map((part) => (part.invalid ? `tool not run: ${part.error?.name}` : "tool call, not run")).join("; ")
    || "-";
}

function sdkRow(result, ran, text, errors = []) {
  return {
    reports: result.finishReason,
    details: result.rawFinishReason ?? "-",
    text: quoted(text),
    tool: [toolOutcome(result.content, ran), ...errors].filter((part) => part !== "-").join("; ") || "-",
  };
}

const aiSdk = {
  "AI SDK `generateText`, `openai.responses()`": async (provider, request, headers) => {
    const ran = [];
    const result = await generateText({ model: provider.responses(request.model), headers, ...sdkOptions(request, ran) });
    return sdkRow(result, ran, result.text);
  },

  "AI SDK `streamText`, `openai.responses()`": async (provider, request, headers) => {
    const ran = [];
    const errors = [];
    // streamText does not throw: each failure goes to onError, and the stream ends with "error"
    const result = streamText({ model: provider.responses(request.model), headers, ...sdkOptions(request, ran),
      onError: ({ error }) => { errors.push(error); } });
    const text = await result.text;
    return sdkRow({ finishReason: await result.finishReason, rawFinishReason: await result.rawFinishReason,
      content: await result.content }, ran, text, rejected(errors).map((what) => `onError: ${what}`));
  },

  "AI SDK `generateText`, `openai.chat()`": async (provider, request, headers) => {
    const ran = [];
    const result = await generateText({ model: provider.chat(request.model), headers, ...sdkOptions(request, ran) });
    return sdkRow(result, ran, result.text);
  },
};

// --- the run ------------------------------------------------------------------------------

export const CLIENTS = { "openai-node": Object.keys(openaiNode), "AI SDK": Object.keys(aiSdk) };
export const CALLS = Object.values(CLIENTS).flat();

/**
 * What one client call made of one scenario's reply in one behaviour, as a row of the table. The
 * call selects the scenario by header, sends its recorded request, and must reach that scenario.
 */
export async function measure(root, call, name, behaviour, recorded) {
  const baseURL = `${root}/${behaviour}/v1`;
  const served = [];
  const fetchAndNote = async (url, init) => {
    const reply = await fetch(url, init);
    served.push(reply.headers.get("x-mockllama-scenario"));
    return reply;
  };
  const headers = { "X-Mockllama-Scenario": name };
  const request = { ...recorded };
  delete request.stream;
  let row;
  try {
    if (call in openaiNode) {
      const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, fetch: fetchAndNote });
      row = await openaiNode[call](client, request, { headers });
    } else {
      const provider = createOpenAI({ baseURL, apiKey: "unused", fetch: fetchAndNote });
      row = await aiSdk[call](provider, request, headers);
    }
  } catch (err) {
    row = { reports: "-", details: "-", text: "-", tool: thrown(err) };
  }
  if (served.length === 0 || served.some((scenario) => scenario !== name)) {
    throw new Error(`${call} in ${behaviour} reached ${JSON.stringify(served)}, not ${name}`);
  }
  return { call, scenario: name, behaviour, ...row };
}

/**
 * Every client call, case and behaviour the server serves: { behaviours, cut (per case), rows }, one row
 * each, each call asserted to have reached its case.
 */
export async function run(root) {
  const { behaviours, requests, cut } = await served(root);
  const rows = [];
  for (const call of CALLS) {
    for (const name of CASES) {
      for (const behaviour of behaviours) rows.push(await measure(root, call, name, behaviour, requests[name]));
    }
  }
  return { behaviours, cut: Object.fromEntries(CASES.map((name) => [name, cut[name]])), rows };
}

// --- the page -----------------------------------------------------------------------------

const cell = (text) => String(text).replaceAll("|", "\\|");
const FOOLED = new Set(OUTCOMES.filter((o) => o.fooled).map((o) => o.name));

/** Some of the behaviours, as the page names them: every one, every one but a few, or each. */
export function named(chosen, behaviours, noun = "behaviour") {
  if (chosen.length === behaviours.length) return `every ${noun}`;
  const others = behaviours.filter((behaviour) => !chosen.includes(behaviour));
  return others.length < chosen.length ? `every ${noun} but ${others.join(", ")}` : chosen.join(", ");
}

/** Whether a row shows the client fooled: a cut reply, taken for a whole one. */
export function fooled(row, cut) {
  return cut[row.scenario] && FOOLED.has(outcome(row));
}

/**
 * One call on one server, in a few words: what it did with each case, cases that fared alike together, a
 * fooled outcome in bold. A finished reply taken whole is right, and goes unsaid.
 */
function verdict(rows, cut) {
  const byWords = new Map();
  for (const row of rows) {
    if (!cut[row.scenario] && FOOLED.has(outcome(row))) continue;
    const words = fooled(row, cut) ? `**${short(row)}**` : short(row);
    byWords.set(words, [...(byWords.get(words) ?? []), row.scenario]);
  }
  if (byWords.size <= 1) return [...byWords.keys()][0] ?? "reads it";
  return [...byWords].map(([words, cases]) => `${words} (${cases.map((name) => `\`${name}\``).join(", ")})`)
    .join("; ");
}

/** Per client: a table of server × call, then which servers fool each call. */
function perServer({ behaviours, cut, rows }) {
  const lines = [];
  for (const [client, calls] of Object.entries(CLIENTS)) {
    const heads = calls.map((call) => call.slice(client.length + 1));
    lines.push("", `### ${client}`, "", `| server | ${heads.join(" | ")} |`, `|${" --- |".repeat(calls.length + 1)}`);
    for (const behaviour of behaviours) {
      const verdicts = calls.map((call) => verdict(
        rows.filter((row) => row.call === call && row.behaviour === behaviour), cut));
      lines.push(`| ${[behaviour, ...verdicts].map(cell).join(" | ")} |`);
    }
    lines.push("");
    for (const [call, head] of calls.map((call, i) => [call, heads[i]])) {
      const by = behaviours.filter((behaviour) => rows.some((row) =>
        row.call === call && row.behaviour === behaviour && fooled(row, cut)));
      lines.push(`- ${head}: fooled by ${by.length ? named(by, behaviours, "server") : "no server"}.`);
    }
  }
  return lines;
}

/** One row per call, case and outcome: the behaviours that made the same of a case share it. */
function everyRow({ behaviours, rows }) {
  const lines = [`| ${COLUMNS.join(" | ")} |`, `|${" --- |".repeat(COLUMNS.length)}`];
  for (const call of CALLS) {
    for (const name of CASES) {
      const alike = new Map();
      for (const row of rows.filter((r) => r.call === call && r.scenario === name)) {
        const text = row.text === "-" ? "-" : `\`${row.text}\``;
        const key = JSON.stringify([row.reports, row.details, text, row.tool]);
        alike.set(key, [...(alike.get(key) ?? []), row.behaviour]);
      }
      for (const [key, chosen] of alike) {
        const [reports, details, text, tool] = JSON.parse(key);
        lines.push(`| ${[call, `\`${name}\``, named(chosen, behaviours), reports, details, text, tool]
          .map(cell).join(" | ")} |`);
      }
    }
  }
  return lines;
}

export function render(measured) {
  return [
    `Generated by \`node tests/js/matrix.mjs URL --write docs/typescript.md\` with ${PACKAGES.map(
      (name) => `${name} ${version(name)}`).join(", ")}, on ${measured.behaviours.length} servers: `
      + `${measured.behaviours.join(", ")}.`,
    ...perServer(measured),
    "",
    "### Every call, scenario and server",
    "",
    ...everyRow(measured),
  ].join("\n");
}

export function replaceTable(document, table) {
  const start = document.indexOf(BEGIN);
  const stop = document.indexOf(END);
  if (start < 0 || stop < start) throw new Error(`the document has no ${BEGIN} ... ${END} markers`);
  return `${document.slice(0, start + BEGIN.length)}\n${table}\n${document.slice(stop)}`;
}

// `<!-- include: PATH -->` before a fenced block: the block holds that file (from the repository
// root) as it is, so the examples on the page are the ones the tests run.
const INCLUDE = /(<!-- include: (\S+) -->\n```\w*\n)[\s\S]*?(```\n)/g;

export function refreshIncludes(document) {
  return document.replace(INCLUDE, (_, opening, path, closing) => {
    const text = readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
    if (text.includes("```")) throw new Error(`${path} holds a code fence, which the page cannot include`);
    return `${opening}${text}${closing}`;
  });
}

async function main(args) {
  const [root, flag, path] = args;
  if (!root || (flag && !(flag === "--json" || (flag === "--write" && path)))) {
    console.error("usage: node tests/js/matrix.mjs URL [--json | --write FILE]");
    process.exit(2);
  }
  const measured = await run(root.replace(/\/+$/, ""));
  const table = render(measured);
  if (!flag) {
    console.log(table);
  } else if (flag === "--json") {
    console.log(JSON.stringify({ ...measured, markdown: table }));
  } else {
    writeFileSync(path, refreshIncludes(replaceTable(readFileSync(path, "utf8"), table)));
    console.error(`wrote the JavaScript matrix and the included files into ${path}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
