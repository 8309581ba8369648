import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";
import OpenAI from "openai";
import { describe, expect, inject, test } from "vitest";
import { askUntilComplete, doubling, runToolCalls } from "./truncation-safe-client";

const mockllama = inject("mockllama"); // the URL mockllama.setup.ts started it on
const COUNT = "Count from 1 to 200, separated by spaces."; // recorded as text-cut-8: cut at 8 tokens
const SEA = "Write one sentence about the sea."; // recorded at 8, 16 and 32 tokens (ladder-*)
const writeFile = {
  type: "function" as const,
  name: "write_file",
  description: "Write text content to a file at the given path.",
  parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } },
  strict: false,
};

describe.each(["buggy", "fixed"])("against %s", (behaviour) => {
  const baseURL = `${mockllama}/${behaviour}/v1`;
  const client = new OpenAI({ baseURL, apiKey: "unused" });

  test("the AI SDK says a cut reply is finished only on llama-server (buggy)", async () => {
    const openai = createOpenAI({ baseURL, apiKey: "unused" });
    const { finishReason, text } = await generateText({
      model: openai.responses("gpt-4o-mini"), prompt: COUNT, maxOutputTokens: 8, temperature: 0,
    });
    expect(text).toBe("1. 1\n2. ");
    expect(finishReason).toBe(behaviour === "buggy" ? "stop" : "length");
  });

  test("openai-node's status says the same", async () => {
    const response = await client.responses.create({
      model: "gpt-4o-mini", input: COUNT, max_output_tokens: 8, temperature: 0,
    });
    expect(response.status).toBe(behaviour === "buggy" ? "completed" : "incomplete");
  });

  test("the truncation-safe client asks again with twice the limit until the reply is whole", async () => {
    const attempts = await askUntilComplete(client, { model: "x", input: SEA, temperature: 0 }, doubling(8, 1024));
    expect(attempts.map(({ limit, cutOff }) => [limit, cutOff])).toEqual([[8, true], [16, true], [32, false]]);
  });

  test.each(["tool-cut-20", "tool-cut-30"])("it never runs the cut call of %s", async (scenario) => {
    const ran: unknown[] = [];
    const tools = { write_file: async (args: Record<string, unknown>) => { ran.push(args); return "written"; } };
    const [answer] = await askUntilComplete(client, { model: "x", input: "Save hello.", tools: [writeFile] }, [20],
      { headers: { "X-Mockllama-Scenario": scenario } }); // a recorded cut, whatever the prompt
    expect(answer.cutOff).toBe(true);
    await expect(runToolCalls(answer, tools)).rejects.toThrow("not running the tool calls of a cut-off reply");
    expect(ran).toEqual([]);
  });

  test("its usage rule takes a reply of exactly the limit for a cut one (a known false positive)", async () => {
    const capital = "What is the capital of France? Answer in one sentence."; // text-exact-limit: 8 tokens of 8
    const [answer] = await askUntilComplete(client, { model: "x", input: capital, temperature: 0 }, [8]);
    expect([answer.response.status, answer.cutOff]).toEqual(["completed", true]);
  });

  test("it runs a call that finished", async () => {
    const tools = { write_file: async ({ path }: Record<string, unknown>) => `wrote ${path}` };
    const [answer] = await askUntilComplete(client, { model: "x", input: "Save hello.", tools: [writeFile] }, [400],
      { headers: { "X-Mockllama-Scenario": "tool-finishes" } });
    expect(await runToolCalls(answer, tools)).toEqual(["wrote /tmp/hello.txt"]);
  });
});

// Every way a server reports a cut reply: llama-server's (buggy), the honest ones, and each other
// server's truncation signals on the same recordings (docs/variants.md).
const SERVERS = ["buggy", "fixed", "spec", "aimock", "inspect-ai", "litellm", "lmstudio", "localai", "ollama", "sglang", "vllm"];
const SAYS_COMPLETED_WHEN_CUT = ["buggy", "lmstudio", "localai", "ollama", "sglang"]; // the status alone fools a client

describe.each(SERVERS)("a cut reply from %s", (behaviour) => {
  const client = new OpenAI({ baseURL: `${mockllama}/${behaviour}/v1`, apiKey: "unused" });
  const request = { model: "x", input: COUNT, temperature: 0 };

  test("fools a client that trusts status === 'completed' only where the status lies", async () => {
    const response = await client.responses.create({ ...request, max_output_tokens: 8 });
    expect(response.status === "completed").toBe(SAYS_COMPLETED_WHEN_CUT.includes(behaviour));
  });

  test("never fools the truncation-safe client, whichever signal the server kept", async () => {
    const [answer] = await askUntilComplete(client, request, [8]);
    expect(answer.cutOff).toBe(true);
    const kept = SAYS_COMPLETED_WHEN_CUT.includes(behaviour) ? "usage"
      : behaviour === "inspect-ai" ? "incomplete_details" // status null, the reason given
      : "status";
    expect(answer.reason).toMatch(new RegExp(`^${kept}`));
  });
});

test("the journal shows what a client sent and which recording answered", async () => {
  const { last_id } = await (await fetch(`${mockllama}/_mockllama/journal`)).json();
  const openai = createOpenAI({ baseURL: `${mockllama}/fixed/v1`, apiKey: "unused" });
  await generateText({ model: openai.responses("gpt-4o-mini"), prompt: COUNT, maxOutputTokens: 8, temperature: 0 });
  const { entries } = await (await fetch(`${mockllama}/_mockllama/journal?since=${last_id}`)).json();
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ path: "/fixed/v1/responses", scenario: "text-cut-8", selected_by: "match" });
  expect(entries[0].body).toMatchObject({ max_output_tokens: 8, temperature: 0 });
});
