import { misbehavingServerPath } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callInFlight, textOf } from "./in-flight";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const SECRET = "drain-test-token-0123456789";
const AUTH = { authorization: `Bearer ${SECRET}` };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "late", version: "1.0.0" } },
};

let dir: string;
let configFile: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-drain-"));
  configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
});
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux"), CODEMUX_TOKEN: `laptop:${SECRET}` });

const serve = (args: string[]) => serveCli(["serve", "--http", ":0", "--config", configFile, ...args], { cwd: dir, env: env(), started });

/** Polls /readyz until it stops answering 200 (the signal is handled asynchronously). */
async function readyzWhileDraining(url: string): Promise<{ status: number; body: unknown }> {
  for (;;) {
    const res = await fetch(`${url}/readyz`, { headers: AUTH });
    const body = await res.json();
    if (res.status !== 200) return { status: res.status, body };
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("codemux serve --http drains on SIGTERM", () => {
  it("answers /readyz 503 draining, refuses a new session with Retry-After and a new job, ends an open stream with a retry hint, lets the call in flight finish, and exits 0", async () => {
    const { child, url, stderr } = await serve(["--drain-ms", "60000"]);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const stream = await fetch(`${url}/sse`, { headers: { ...AUTH, accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    const streamText = stream.text();
    const { client, answer, session } = await callInFlight(url, AUTH, { tool: "m__slow", args: { ms: 6000, steps: 60 } });

    child.kill("SIGTERM");
    expect(await readyzWhileDraining(url)).toMatchObject({ status: 503, body: { status: "draining" } });
    const late = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(INITIALIZE),
    });
    expect(late.status).toBe(503);
    expect(late.headers.get("retry-after")).toBe("5");
    expect(((await late.json()) as { error: { message: string } }).error.message).toContain("is draining before it stops and takes no new MCP sessions");
    // The session's own client may keep calling, but a new GET stream would only be cut again.
    const lateStream = await fetch(`${url}/mcp`, { headers: { ...AUTH, accept: "text/event-stream", "mcp-session-id": session } });
    expect(lateStream.status).toBe(503);
    expect(await lateStream.text()).toContain("takes no new streams");

    const job = await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "late" }, background: true } });
    expect(textOf(job)).toContain("This codemux instance is draining before it stops and takes no new jobs");

    expect(await streamText).toMatch(/\nretry: 2000\n\n$/);
    expect(await answer).toEqual({ text: "slept 6000 ms" });
    await client.close().catch(() => undefined);
    expect(await exited).toBe(0);
    expect(stderr()).toContain("codemux: draining (finishing calls in flight, at most 60000 ms)");
  });

  it("exits within --drain-ms though a call needs longer, answering it with the shutdown error", async () => {
    const { child, url } = await serve(["--drain-ms", "500"]);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const { client, answer } = await callInFlight(url, AUTH, { tool: "m__slow", args: { ms: 8000, steps: 80 } });
    child.kill("SIGTERM");
    expect(await answer).toEqual({ error: expect.stringContaining("codemux is shutting down; retry against the next instance.") });
    expect(await exited).toBe(0);
    await client.close().catch(() => undefined);
  });

  it("bounds --drain-ms", async () => {
    const run = await runCli(["serve", "--http", ":0", "--config", configFile, "--drain-ms", "600001"], { cwd: dir, env: env() });
    expect(run).toMatchObject({ code: 2, stderr: expect.stringContaining("expected at most 600000 (ten minutes).") });
  });
});
