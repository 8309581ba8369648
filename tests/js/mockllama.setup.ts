// vitest globalSetup: one mockllama for the whole run, on a free port, stopped at the end.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    mockllama: string; // its root URL, e.g. http://127.0.0.1:40123
  }
}

/** The first line `mockllama serve` prints is its URL, with the port it bound. */
async function firstLine(server: ChildProcess): Promise<string> {
  const lines = createInterface({ input: server.stdout! });
  const exited = once(server, "exit").then(([code]) => {
    throw new Error(`mockllama serve exited (${code}) before it listened`);
  });
  const spawnFailed = once(server, "error").then(([err]) => {
    throw new Error(`cannot start mockllama: is the mockllama command on PATH? ${err.message}`);
  });
  return Promise.race([once(lines, "line").then(([line]) => line as string), exited, spawnFailed]);
}

async function waitForHealth(url: string, seconds = 20): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`mockllama at ${url} did not answer /health within ${seconds} s`);
}

export default async function setup(project: TestProject) {
  const server = spawn("mockllama", ["serve", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await firstLine(server);
  await waitForHealth(url);
  project.provide("mockllama", url);
  return async () => {
    server.kill("SIGINT"); // mockllama stops cleanly on Ctrl-C
    await once(server, "exit");
  };
}
