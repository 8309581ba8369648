// A /v1/responses client on openai-node that notices cut-off replies, even from a server that says
// "completed" (llama-server), retries with twice the limit, and never runs a cut tool call.
// Cut off, by the first rule that fires:
//   1. status === "incomplete": what a correct server says (vLLM and aimock too);
//   2. incomplete_details set, whatever the status says (inspect_ai sends status null with it);
//   3. usage.output_tokens >= max_output_tokens: the one sign llama-server keeps (Ollama, LocalAI, SGLang too);
//   4. a function_call whose arguments do not parse as JSON.
import OpenAI from "openai";
import type { Response, ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";

export interface Answer {
  response: Response;
  cutOff: boolean; // true: do not use this as a whole answer
  reason: string; // which rule decided, in words
  limit: number; // the max_output_tokens asked for
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function judge(response: Response, limit: number): Answer {
  const answer = (cutOff: boolean, reason: string) => ({ response, cutOff, reason, limit });
  if (response.status === "incomplete") return answer(true, "status is 'incomplete'");
  if (response.incomplete_details) {
    return answer(true, `incomplete_details gives the reason '${response.incomplete_details.reason}'`);
  }
  if ((response.usage?.output_tokens ?? 0) >= limit) {
    return answer(true, `usage.output_tokens reached max_output_tokens=${limit}`);
  }
  for (const item of response.output) {
    if (item.type === "function_call" && !parses(item.arguments)) {
      return answer(true, "a function_call's arguments do not parse as JSON");
    }
  }
  return answer(false, `status is '${response.status}' and no rule fired`);
}

/** first, 2 × first, 4 × first, ... and the ceiling last. */
export function* doubling(first: number, ceiling: number): Generator<number> {
  let limit = first;
  for (; limit < ceiling; limit *= 2) yield limit;
  yield ceiling;
}

type Request = Omit<ResponseCreateParamsNonStreaming, "max_output_tokens">;

/** Ask at each limit in turn until a reply is whole; every attempt, in order. */
export async function askUntilComplete(client: OpenAI, request: Request, limits: Iterable<number>,
  options?: OpenAI.RequestOptions): Promise<Answer[]> {
  const attempts: Answer[] = [];
  for (const limit of limits) {
    const response = await client.responses.create({ ...request, max_output_tokens: limit }, options);
    attempts.push(judge(response, limit));
    if (!attempts.at(-1)!.cutOff) break;
  }
  return attempts;
}

export type Tools = Record<string, (args: Record<string, unknown>) => Promise<string>>;

/** Run the reply's function calls, unless the reply was cut off: then run none, and say why. */
export async function runToolCalls(answer: Answer, tools: Tools): Promise<string[]> {
  if (answer.cutOff) throw new Error(`not running the tool calls of a cut-off reply: ${answer.reason}`);
  const outputs: string[] = [];
  for (const item of answer.response.output) {
    if (item.type === "function_call") outputs.push(await tools[item.name](JSON.parse(item.arguments)));
  }
  return outputs;
}
