// JavaScript clients, unmodified: each sends the seed request in its own ordinary options, with no
// scenario header and no scenario name as the model; mockllama must reach the recording by matching.
//
//   node tests/js/clients.mjs URL      one JSON line per client call and behaviour
//
// URL is a running `mockllama serve`. Every line says what the client reported and, for each HTTP
// reply it got, the X-Mockllama-Scenario, -Selected-By and -Turn headers (read through the
// client's fetch hook). tests/clients/test_js_clients.py asserts on them.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";

const BEHAVIOURS = ["buggy", "fixed", "spec"];
const MODEL = "gpt-4o-mini"; // what a user of these clients writes; mockllama ignores it

/** A fetch that notes the mockllama headers of every reply. */
function noting(served) {
  return async (url, init) => {
    const reply = await fetch(url, init);
    served.push({
      status: reply.status,
      scenario: reply.headers.get("x-mockllama-scenario"),
      selectedBy: reply.headers.get("x-mockllama-selected-by"),
      turn: reply.headers.get("x-mockllama-turn"),
      error: reply.ok ? null : (await reply.clone().json()).error?.message ?? null,
    });
    return reply;
  };
}

/** The seed request's prompt, limit and temperature (text-cut-8, as recorded). */
function seed(requests) {
  const { input, max_output_tokens: limit, temperature } = requests["text-cut-8"];
  return { input, limit, temperature };
}

const openaiNode = {
  "openai-node responses.create, string input": async (client, { input, limit, temperature }) => {
    const response = await client.responses.create({ model: MODEL, input, max_output_tokens: limit, temperature });
    return { status: response.status, text: response.output_text };
  },
  "openai-node responses.create, message list": async (client, { input, limit, temperature }) => {
    const response = await client.responses.create({ model: MODEL, input: [{ role: "user", content: input }],
      max_output_tokens: limit, temperature });
    return { status: response.status, text: response.output_text };
  },
  "openai-node responses.create, input_text parts": async (client, { input, limit, temperature }) => {
    const response = await client.responses.create({ model: MODEL, max_output_tokens: limit, temperature,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }] });
    return { status: response.status, text: response.output_text };
  },
  "openai-node responses.create, stream: true": async (client, { input, limit, temperature }) => {
    const stream = await client.responses.create({ model: MODEL, input, max_output_tokens: limit, temperature,
      stream: true });
    let last;
    for await (const event of stream) last = event;
    return { status: last.response.status, event: last.type };
  },
  "openai-node responses.stream(), finalResponse()": async (client, { input, limit, temperature }) => {
    const response = await client.responses.stream({ model: MODEL, input, max_output_tokens: limit, temperature })
      .finalResponse();
    return { status: response.status, text: response.output_text };
  },
  "openai-node chat.completions.create, max_completion_tokens": async (client, { input, limit, temperature }) => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: input }],
      max_completion_tokens: limit, temperature });
    return { finishReason: completion.choices[0].finish_reason, text: completion.choices[0].message.content };
  },
  "openai-node chat.completions.create, max_tokens, stream: true": async (client, { input, limit, temperature }) => {
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: input }],
      max_tokens: limit, temperature, stream: true });
    let finishReason;
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
    }
    return { finishReason, text };
  },
};

const aiSdk = {
  "AI SDK generateText, openai.responses()": async (provider, { input, limit, temperature }) => {
    const result = await generateText({ model: provider.responses(MODEL), prompt: input, maxOutputTokens: limit,
      temperature });
    return { finishReason: result.finishReason, text: result.text };
  },
  "AI SDK streamText, openai.responses()": async (provider, { input, limit, temperature }) => {
    const result = streamText({ model: provider.responses(MODEL), prompt: input, maxOutputTokens: limit, temperature,
      onError: () => {} }); // the failures are the matrix's business; this test is about the request
    await result.consumeStream();
    return { finishReason: await result.finishReason };
  },
  "AI SDK generateText, openai.chat()": async (provider, { input, limit, temperature }) => {
    const result = await generateText({ model: provider.chat(MODEL), prompt: input, maxOutputTokens: limit,
      temperature });
    return { finishReason: result.finishReason, text: result.text };
  },
  "AI SDK streamText, openai.chat()": async (provider, { input, limit, temperature }) => {
    const result = streamText({ model: provider.chat(MODEL), prompt: input, maxOutputTokens: limit, temperature });
    return { finishReason: await result.finishReason, text: await result.text };
  },
};

/**
 * The AI SDK's tool loop over tool-conversation's recorded prompt: a tool call is forced in the
 * first step only, as the recording did (its second turn carries no tool_choice).
 */
async function toolLoop(provider, request, headers) {
  const [recorded] = request.tools;
  const runs = [];
  const result = await generateText({
    model: provider.responses(MODEL),
    headers,
    messages: request.input.map(({ role, content }) => ({ role, content })),
    maxOutputTokens: request.max_output_tokens,
    temperature: request.temperature,
    tools: {
      [recorded.name]: tool({
        description: recorded.description,
        inputSchema: jsonSchema(recorded.parameters),
        strict: recorded.strict,
        execute: async ({ path, content }) => {
          runs.push(path);
          return `wrote ${content.length} characters to ${path}`;
        },
      }),
    },
    prepareStep: ({ stepNumber }) => (stepNumber === 0 ? { toolChoice: request.tool_choice } : {}),
    stopWhen: stepCountIs(5),
  });
  return { finishReason: result.finishReason, steps: result.steps.length, runs: runs.length, text: result.text };
}

async function attempt(call) {
  try {
    return await call();
  } catch (err) {
    return { threw: `${err?.constructor?.name}: ${String(err?.message).split("\n")[0]}` };
  }
}

export async function observe(root) {
  const stories = await (await fetch(`${root}/_mockllama/scenarios.json`)).json();
  const requests = Object.fromEntries(stories.map((story) => [story.name, story.request]));
  const lines = [];
  for (const behaviour of BEHAVIOURS) {
    const baseURL = `${root}/${behaviour}/v1`;
    for (const [name, call] of Object.entries(openaiNode)) {
      const served = [];
      const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, fetch: noting(served) });
      lines.push({ client: name, behaviour, reports: await attempt(() => call(client, seed(requests))), served });
    }
    for (const [name, call] of Object.entries(aiSdk)) {
      const served = [];
      const provider = createOpenAI({ baseURL, apiKey: "unused", fetch: noting(served) });
      lines.push({ client: name, behaviour, reports: await attempt(() => call(provider, seed(requests))), served });
    }
    for (const [name, headers] of [["AI SDK tool loop, unselected", {}],
      ["AI SDK tool loop, X-Mockllama-Scenario: tool-conversation", { "X-Mockllama-Scenario": "tool-conversation" }]]) {
      const served = [];
      const provider = createOpenAI({ baseURL, apiKey: "unused", fetch: noting(served) });
      const reports = await attempt(() => toolLoop(provider, requests["tool-conversation"], headers));
      lines.push({ client: name, behaviour, reports, served });
    }
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [root] = process.argv.slice(2);
  if (!root) {
    console.error("usage: node tests/js/clients.mjs URL");
    process.exit(2);
  }
  for (const line of await observe(root.replace(/\/+$/, ""))) console.log(JSON.stringify(line));
}
