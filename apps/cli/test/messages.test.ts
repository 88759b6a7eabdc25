import { estimateTokens } from "@codemux/core";
import { misbehavingServerPath, modernServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, runCli } from "./run-cli";

// What the built CLI tells a user: states, config mistakes, failing servers, the upfront cost.

let dir: string;
let home: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-messages-"));
  home = await mkdtemp(join(tmpdir(), "codemux-home-"));
});
afterAll(async () => {
  await Promise.all([dir, home].map((d) => rm(d, { recursive: true, force: true })));
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") });

const codemux = (args: string[]) => runCli(args, { cwd: dir, env: env() });

async function configFile(name: string, config: unknown): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, typeof config === "string" ? config : JSON.stringify(config));
  return file;
}

describe("codemux list", () => {
  it("calls a server still starting a state (starting (N s)), not an error, and still exits 1 until it is ready", async () => {
    const file = await configFile("slow.json", {
      mcpServers: {
        good: { command: process.execPath, args: [misbehavingServerPath] },
        slow: { command: process.execPath, args: [misbehavingServerPath, "--start-delay-ms", "600000"], connectTimeoutMs: 600_000 },
      },
    });
    // Both wait out the start-up wait (15 s) for the slow server, side by side.
    const [table, json] = await Promise.all([codemux(["list", "--config", file]), codemux(["list", "--json", "--config", file])]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/^ {2}slow {2}starting \(\d+ s\) {2}0 tools$/m);
    expect(table.stdout + table.stderr).not.toMatch(/error|no answer to initialize/i);
    const slow = (JSON.parse(json.stdout) as Array<Record<string, unknown>>).find((s) => s.name === "slow");
    expect(slow).toMatchObject({ state: "connecting", detail: expect.stringMatching(/^starting \(\d+ s\)$/) });
    expect(slow).not.toHaveProperty("error");
  });
});

describe("codemux list, servers of both protocol eras", () => {
  it("shows the protocol each server speaks, in the table and in --json", async () => {
    const file = await configFile("eras.json", {
      mcpServers: {
        old: { command: process.execPath, args: [misbehavingServerPath] },
        new: { command: process.execPath, args: [modernServerPath, "--legacy", "reject"] },
      },
    });
    const [table, json] = await Promise.all([codemux(["list", "--config", file]), codemux(["list", "--json", "--config", file])]);
    expect(table.stdout).toMatch(/^ {2}old {2}ready {2}\d+ tools +2025-11-25$/m);
    expect(table.stdout).toMatch(/^ {2}new {2}ready {2}\d+ tools +2026-07-28$/m);
    const servers = JSON.parse(json.stdout) as Array<{ name: string; protocol?: string }>;
    expect(servers.map((s) => [s.name, s.protocol])).toEqual([
      ["old", "2025-11-25"],
      ["new", "2026-07-28"],
    ]);
  });
});

describe("a server that fails at start", () => {
  it("is reported with the line that says why (Cannot find module), not the stack frames and Node's version after it", async () => {
    const missing = join(dir, "no-such-server.js");
    const file = await configFile("crash.json", { mcpServers: { broken: { command: process.execPath, args: [missing] } } });
    const listing = await codemux(["list", "--config", file]);
    expect(listing.code).toBe(1);
    expect(listing.stdout).toContain(`broken  failed  0 tools  the process exited with code 1; stderr: Error: Cannot find module '${missing}'\n`);
    expect(listing.stdout).not.toMatch(/node:internal|Node\.js v/);
  });
});

describe("the upfront tool list", () => {
  it("list reports the tokens of the list a client of serve gets (the jobs tool included)", async () => {
    const file = await configFile("one.json", { mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } });
    const listing = await codemux(["list", "--config", file]);
    const reported = Number(/Upfront tool list: ~([\d,]+) tokens in mode code/.exec(listing.stdout)?.[1]?.replaceAll(",", ""));
    const client = new Client({ name: "messages-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, "--config", file], cwd: dir, env: env(), stderr: "pipe" }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("jobs");
      expect(reported).toBe(estimateTokens(JSON.stringify(tools)));
    } finally {
      await client.close();
    }
  });
});

describe("a config with a misspelled key", () => {
  it("stops with the key meant (comand, mcpServer), exit 2", async () => {
    const command = await configFile("comand.json", { mcpServers: { a: { comand: "npx", args: ["-y", "pkg"] } } });
    const top = await configFile("mcpserver.json", { mcpServer: { a: { command: "npx" } } });
    const [entry, topLevel] = await Promise.all([codemux(["list", "--config", command]), codemux(["list", "--config", top])]);
    expect(entry).toMatchObject({ code: 2 });
    expect(entry.stderr).toBe(
      `codemux: Invalid config ${command}: mcpServers.a.command: required (or give "url" for an HTTP server); did you mean "command" instead of "comand"?\n`,
    );
    expect(topLevel).toMatchObject({ code: 2 });
    expect(topLevel.stderr).toContain('did you mean "mcpServers" instead of "mcpServer"?');
  });
});
