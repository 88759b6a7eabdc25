import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { conformanceServerPath, misbehavingServerPath } from "./paths";

/** A config entry (stdio) that starts the misbehaving server as `name`, with `extra` fields such as `env`. */
export function misbehavingEntry(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [misbehavingServerPath, "--name", name], ...extra };
}

/** Starts the test server at `path` over Streamable HTTP on a free loopback port (`--http 0`); resolves once it says where it listens. */
export async function startOverHttp(path: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path, "--http", "0", ...args], { stdio: ["ignore", "pipe", "inherit"], env });
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
  return { child, url: `http://127.0.0.1:${/listening (\d+)/.exec(chunk.toString())![1]}` };
}

/** Starts the conformance referee's everything-server (vendored) on a free port; resolves with the child and its `/mcp` URL. */
export async function startConformanceFixture(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [conformanceServerPath], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, PORT: "0" } });
  let output = "";
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    const url = /MCP endpoint: (http:\/\/\S+\/mcp)/.exec(output)?.[1];
    if (url) return { child, url };
  }
  throw new Error(`the conformance everything-server exited before it said where it serves: ${output.slice(-2000)}`);
}

/**
 * Resolves once `check` holds, asking every 50 ms; throws after 20 s (what a test waits for happens in far less on a
 * quiet machine; CI runs two suites at once, each with Redis and child processes).
 */
export async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the condition never held");
}

/** A client transport's message hook, as the MCP SDKs' transports have it. */
interface MessageHook {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
}

/**
 * Records each answer with `resultType: "task"` that a connected client's transport receives, then
 * passes every message on. The SDK v2 client has no Tasks support and refuses such an answer, so a
 * test reads the task here (ext-tasks' `rawDispatch` reads it off the wire the same way).
 */
export function recordTasks(transport: MessageHook): Array<Record<string, unknown>> {
  const created: Array<Record<string, unknown>> = [];
  const deliver = transport.onmessage as ((message: unknown, extra?: unknown) => void) | undefined;
  transport.onmessage = ((message: { result?: Record<string, unknown> }, extra?: unknown) => {
    if (message.result?.resultType === "task") created.push(message.result);
    deliver?.(message, extra);
  }) as MessageHook["onmessage"];
  return created;
}
