import OpenAI from "openai";
import type { ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { expect, inject, test } from "vitest";
import { judge } from "./truncation-safe-client";

const mockllama = inject("mockllama"); // the URL mockllama.setup.ts started it on
const SWEEP = "tool-call"; // one tool call, recorded at every limit from 1 to where it finishes

// The sweep as the running server lists it: one entry, its positions first..last, and the request
// of its last position (the one where the reply finishes); each position is that request at its limit.
type Sweep = { name: string; kind: string; first: number; last: number; request: ResponseCreateParamsNonStreaming };
const stories: Sweep[] = await (await fetch(`${mockllama}/_mockllama/scenarios.json`)).json();
const sweep = stories.find(({ name, kind }) => name === SWEEP && kind === "sweep")!;
const positions = Array.from({ length: sweep.last - sweep.first + 1 }, (_, i) => sweep.first + i)
  .map((position) => ({ position, request: { ...sweep.request, max_output_tokens: position } }));
const last = positions.at(-1)!.position; // where the reply finishes by itself
const cuts = ["buggy", "fixed"].flatMap((behaviour) =>
  positions.map((cut) => [`${SWEEP}@${cut.position}-${behaviour}`, { ...cut, behaviour }] as const));

test.each(cuts)("%s", async (_, { position, request, behaviour }) => { // tool-call@17-fixed
  const client = new OpenAI({ baseURL: `${mockllama}/${behaviour}/v1`, apiKey: "unused" });
  // the recorded request, unselected: its own max_output_tokens picks the position
  const { data: response, response: http } = await client.responses.create(request).withResponse();
  expect(http.headers.get("x-mockllama-scenario")).toBe(`${SWEEP}@${position}`);
  expect(response.usage?.output_tokens).toBe(position);
  const cut = position < last;
  expect(response.status).toBe(behaviour === "fixed" && cut ? "incomplete" : "completed");
  if (cut) expect(judge(response, position).cutOff).toBe(true); // at every cut, whatever the status says
});
