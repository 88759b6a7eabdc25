import { misbehavingServerPath, modernServerPath, startConformanceFixture, startOverHttp } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type AddressInfo } from "node:net";
import type { Logger } from "@codemux/core";
import { afterEach } from "vitest";
import type { ServerPool, ServerSpec } from "../src/index";

export const textOf = (result: { content: unknown }) => (result.content as Array<{ text: string }>)[0]!.text;

/** Starts the misbehaving server over Streamable HTTP; returns its base URL. */
export async function startHttpServer(children: ChildProcess[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { child, url } = await startOverHttp(misbehavingServerPath, [], env);
  children.push(child);
  return url;
}

/** Starts the 2026-era test server (or another SDK v2 one at `path`) over Streamable HTTP with `args`; returns its `/mcp` URL. */
export async function startModernHttp(children: ChildProcess[], args: string[], path = modernServerPath): Promise<string> {
  const { child, url } = await startOverHttp(path, args);
  children.push(child);
  return `${url}/mcp`;
}

/** Starts the conformance referee's everything-server (both eras, its 2026 side hand-written); returns its `/mcp` URL. */
export async function startConformanceServer(children: ChildProcess[]): Promise<string> {
  const { child, url } = await startConformanceFixture();
  children.push(child);
  return url;
}

/** A logger that keeps every line it is given. */
export function recordingLogger(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const push = (m: string) => void lines.push(m);
  return { lines, logger: { debug: push, info: push, warn: push, error: push } };
}

/** What a test file starts and makes (pools, child processes, folders), closed, killed and removed after each test. */
export function cleanedAfterEach(): { pools: ServerPool[]; children: ChildProcess[]; dirs: string[] } {
  const made = { pools: [] as ServerPool[], children: [] as ChildProcess[], dirs: [] as string[] };
  afterEach(async () => {
    await Promise.all(made.pools.splice(0).map((p) => p.close()));
    for (const child of made.children.splice(0)) child.kill();
    for (const dir of made.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return made;
}

/** A file in a new temporary folder (added to `dirs`, for removal) that the test servers append `PID METHOD` to for each request. */
export function logFile(dirs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "codemux-requests-"));
  dirs.push(dir);
  return join(dir, "requests.log");
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function httpSpec(name: string, url: string, extra: Partial<ServerSpec> = {}, headers: Record<string, string> = {}): ServerSpec {
  return { name, transport: { type: "http", url, headers }, callTimeoutMs: 10_000, connectTimeoutMs: 10_000, tools: {}, ...extra };
}

export function stdioSpec(name: string, args: string[] = [], extra: Partial<ServerSpec> = {}): ServerSpec {
  return {
    name,
    transport: { type: "stdio", command: process.execPath, args: [misbehavingServerPath, ...args], env: {} },
    callTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    tools: {},
    ...extra,
  };
}
