import { misbehavingServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli } from "./serve-cli";

const TOKEN = "plugins-reload-token-0123456789";
let dir: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-plugins-reload-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("codemux serve --http applies plugin changes in its config file while serving", () => {
  it("turns pin on and guard off at an edit, refuses an edit with a mistake whole and says so in the log, /readyz and the admin page", async () => {
    const file = join(dir, "codemux.json");
    const rule = (name: string) => ({ rules: [{ name, principals: ["token:admin"], tools: ["*"] }] });
    const write = (plugins: unknown, policies: unknown = rule("all")) =>
      // security.scan "warn": without plugins.pin, pin is truly off (the default "quarantine" runs it for the scan's approvals).
      writeFile(
        file,
        JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, plugins, policies, security: { scan: "warn" } }),
      );
    await write({ guard: { deny: ["m__echo"] } });
    const home = join(dir, ".codemux");
    const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: home };
    const { url, stderr } = await serveCli(["serve", "--config", file, "--http", "127.0.0.1:0", "--token", `admin:${TOKEN}`], { cwd: dir, env, started });
    const logs = (msg: string) =>
      stderr()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((record) => record.msg === msg);
    /** Rewrites the file and waits for the watcher to report on it. */
    const edit = async (msg: string, plugins: unknown, policies?: unknown) => {
      const before = logs(msg).length;
      await write(plugins, policies);
      await until(() => logs(msg).length > before);
      return logs(msg).at(-1) as Record<string, unknown>;
    };

    const client = new Client({ name: "plugins-reload", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const echo = async () => textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "hi" } } }));
    const login = await fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams({ token: TOKEN }), redirect: "manual" });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const page = async (name: string) => (await fetch(`${url}/ui/${name}`, { headers: { cookie } })).text();
    const ready = async () => (await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<Record<string, unknown>>;
    try {
      expect(await echo()).toContain("denied by the guard plugin");
      expect(await page("approvals")).toContain("the pin plugin is off");

      // Adding pin pins, removing guard stops guarding: from the next call, without a restart.
      expect(await edit("config reloaded", { pin: {} })).toMatchObject({ plugins: "pin on, guard off" });
      expect(await echo()).toBe("hi");
      await until(() => existsSync(join(home, "pins.json")) && readFileSync(join(home, "pins.json"), "utf8").includes("m__echo"));
      expect(await page("approvals")).not.toContain("the pin plugin is off");

      // A bad plugin option refuses the whole edit, and says what to write.
      const refused = await edit("config not reloaded; the last good config keeps serving", { pin: {}, "rate-limit": { callsPerMinute: 5 } });
      expect(String(refused.error)).toContain(
        'plugins.rate-limit: unknown option "callsPerMinute"; the options here are enabled, priority, failClosed, timeoutMs, limits.',
      );
      const readiness = await ready();
      expect(readiness.status).toBe("ready");
      expect(String(readiness.config)).toContain("not reloaded: Invalid config");
      expect(String(readiness.config)).toContain('unknown option "callsPerMinute"');
      const notice = await page("./");
      expect(notice).toContain("The config file&#39;s last edit was not applied");
      expect(notice).toContain("callsPerMinute");

      // A mistake elsewhere in the same edit (a policy) keeps the plugins as they were too: guard stays off, pin on.
      await edit("config not reloaded; the last good config keeps serving", { guard: { deny: ["m__echo"] } }, { rules: [{ tools: ["*"], readOnly: "yes" }] });
      expect(await echo()).toBe("hi");
      expect(await page("approvals")).not.toContain("the pin plugin is off");

      // An edit of the policies alone says so; the refusal is gone once an edit applies.
      const policyOnly = await edit("config reloaded", { pin: {} }, rule("everyone"));
      expect(policyOnly).toMatchObject({ policies: "changed", added: [], removed: [], changed: [] });
      expect(policyOnly.plugins).toBeUndefined();
      expect((await ready()).config).toBeUndefined();
      expect(await page("./")).not.toContain("last edit was not applied");
    } finally {
      await client.close();
    }
  });
});
