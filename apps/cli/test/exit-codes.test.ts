import { misbehavingServerPath } from "@codemux/test-servers";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, type CliOptions } from "./run-cli";

const wrapper = resolve(import.meta.dirname, "fixtures/outlives-stdin.mjs");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-exit-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the built CLI in this test's folder, without the catalog cache. */
const codemux = (args: string[], options: Omit<CliOptions, "cwd" | "env"> = {}) =>
  runCli(["--no-cache", ...args], { ...options, cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, "home") } });

describe("one-shot commands with a server behind a wrapper that outlives stdin (as npx -y SERVER)", () => {
  it.each([
    ["list", [], 0],
    ["search", ["echo"], 0],
    ["call", ["w__echo", '{"text":"hi"}'], 0],
    ["call", ["w__fail"], 1],
    ["exec", ["-"], 0],
    ["codegen", ["--out", "generated"], 0],
  ] as const)("%s %s exits %i, and the server's process group gets one SIGTERM", async (command, args, expected) => {
    const log = join(dir, `${command}-${expected}.log`);
    const config = join(dir, `${command}-${expected}.json`);
    await writeFile(config, JSON.stringify({ mcpServers: { w: { command: process.execPath, args: [wrapper, log, misbehavingServerPath] } } }));
    const result = await codemux([command, ...args, "--config", config], { input: "export default 1;\n" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(expected);
    expect((await readFile(log, "utf8")).split("\n").filter((line) => line === "SIGTERM")).toHaveLength(1);
  });
});

describe("Ctrl+C", () => {
  const config = () => join(dir, "plain.json");
  beforeAll(async () => {
    await writeFile(config(), JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
  });

  it("during codemux call says it was interrupted and exits 130, without blaming the server", async () => {
    const result = await codemux(["call", "m__hang", "--config", config(), "--log-level", "info"], { signalAfter: "[m] ready" });
    expect(result.code).toBe(130);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("codemux: interrupted (Ctrl+C); the servers were stopped.\n");
    expect(result.stderr).not.toMatch(/SIGTERM|disconnected/);
  });

  it("ends stdio serve with 130", async () => {
    // Servers start at the client's first request: an initialize, as a client sends at once.
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const result = await codemux(["serve", "--config", config()], { signalAfter: "[m] ready", input: `${JSON.stringify(initialize)}\n` });
    expect(result.code).toBe(130);
    expect(JSON.parse(result.stdout).result.serverInfo.name).toBe("codemux");
  });
});
