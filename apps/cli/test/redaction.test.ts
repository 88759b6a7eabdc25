import { askingServerPath, misbehavingServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli } from "./serve-cli";

const TOKEN = "redaction-token-0123456789";
/** Only the config's own pattern masks it: what passes the built-in patterns alone still shows. */
const SECRET = "ACME-12345678";
const MASKED = "[REDACTED:acme]";
let dir: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-redaction-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** Every regular file under `root` (but `skip`), with its text: a gateway's admin socket holds none. */
function filesUnder(root: string, skip: (path: string) => boolean): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (skip(relative(dir, path))) continue;
    const stat = statSync(path);
    if (stat.isDirectory()) out.push(...filesUnder(path, skip));
    else if (stat.isFile()) out.push({ path, text: readFileSync(path, "utf8") });
  }
  return out;
}

describe("the redact plugin on every path downstream text takes to a client or to disk", () => {
  it("masks a secret a real server puts in log lines, prompts, completions, resources, questions, progress, errors, instructions, its stderr and jobs", async () => {
    const file = join(dir, "codemux.json");
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          a: { command: process.execPath, args: [askingServerPath, "--instructions", `Quote ${SECRET} when asked.`] },
          broken: { command: process.execPath, args: [misbehavingServerPath, "--stderr", `fatal: bad key ${SECRET}`, "--exit-at-start"] },
        },
        plugins: { redact: { patterns: [{ name: "acme", regex: "ACME-[0-9]{8}" }] }, audit: { includeArguments: true } },
      }),
    );
    const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
    const { url, stderr } = await serveCli(["serve", "--config", file, "--http", "127.0.0.1:0", "--token", `admin:${TOKEN}`], { cwd: dir, env, started });
    const headers = { authorization: `Bearer ${TOKEN}` };
    await until(async () =>
      ((await (await fetch(`${url}/readyz`, { headers })).json()) as { servers: Array<{ state: string }> }).servers.every((s) => s.state !== "connecting"),
    );

    const asked: unknown[] = [];
    const logged: unknown[] = [];
    const client = new Client({ name: "redaction", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { answer: "yes" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params);
      return { role: "assistant", content: { type: "text", text: "fine" }, model: "test" };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
    const call = async (name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void) =>
      textOf(await client.callTool({ name: "call_tool", arguments: { name, args } }, undefined, onprogress ? { onprogress } : undefined));
    try {
      // The server's instructions reach the client at initialize.
      expect(client.getInstructions()).toContain(`Quote ${MASKED} when asked.`);
      // A log line during a call, relayed to the client; one outside any call goes to codemux's own log.
      await call("a__log", { data: `log ${SECRET}` });
      await until(() => logged.length > 0);
      expect(JSON.stringify(logged)).toContain(`log ${MASKED}`);
      await call("a__log", { data: `late ${SECRET}`, when: "after-answer", delayMs: 300 });
      await until(() => stderr().includes(`late ${MASKED}`));
      // Questions: elicitation and sampling.
      await call("a__ask", { message: `ask ${SECRET}` });
      await call("a__sample", { message: `sample ${SECRET}` });
      expect(JSON.stringify(asked)).toContain(`ask ${MASKED}`);
      expect(JSON.stringify(asked)).toContain(`sample ${MASKED}`);
      // Progress messages.
      const progress: Progress[] = [];
      await call("a__progress", { message: `progress ${SECRET}` }, (p) => void progress.push(p));
      expect(progress.map((p) => p.message)).toEqual([`progress ${MASKED}`]);
      // A tool's result and its error (the plugin's own paths).
      expect(await call("a__result", { result: { content: [{ type: "text", text: `result ${SECRET}` }] } })).toBe(`result ${MASKED}`);
      expect(await call("a__throw", { message: `thrown ${SECRET}` })).toContain(`thrown ${MASKED}`);
      // prompts/get and completion answer what the server remembered; a completion's error quotes it.
      await call("a__remember", { value: `kept ${SECRET}` });
      const prompt = await client.getPrompt({ name: "a__recall" });
      expect(JSON.stringify(prompt)).toContain(`kept ${MASKED}`);
      const ref = { type: "ref/prompt" as const, name: "a__recall" };
      expect((await client.complete({ ref, argument: { name: "x", value: "" } })).completion.values).toEqual([`kept ${MASKED}`]);
      const failed = await client.complete({ ref, argument: { name: "x", value: "fail" } }).catch((error: Error) => error.message);
      expect(failed).toContain(`kept ${MASKED}`);
      // resources/read: text and a text-typed blob.
      const read = await client.readResource({ uri: `asking://text/${Buffer.from(`resource ${SECRET}`).toString("base64url")}` });
      expect(read.contents.map((c) => ("text" in c ? c.text : Buffer.from(String(c.blob), "base64").toString()))).toEqual([
        `resource ${MASKED}`,
        `resource ${MASKED}`,
      ]);
      // A server that failed: its stderr, in a call's error, a search's, /readyz and the admin page.
      expect(await call("broken__echo", { text: "x" })).toContain(`fatal: bad key ${MASKED}`);
      expect(textOf(await client.callTool({ name: "search_tools", arguments: { query: "echo", server: "broken" } }))).toContain(`fatal: bad key ${MASKED}`);
      const readiness = JSON.stringify(await (await fetch(`${url}/readyz`, { headers })).json());
      expect(readiness).toContain(`fatal: bad key ${MASKED}`);
      // Background jobs: their progress lines and errors, in the journal.
      const jobIds = await Promise.all(
        [
          ["a__progress", { message: `job progress ${SECRET}` }],
          ["a__throw", { message: `job error ${SECRET}` }],
        ].map(async ([name, args]) => {
          const started = textOf(await client.callTool({ name: "call_tool", arguments: { name, args, background: true } }));
          return /Started job (\S+) in the background/.exec(started)?.[1] ?? started;
        }),
      );
      const output = textOf(await client.callTool({ name: "jobs", arguments: { action: "output", ids: jobIds, wait_up_to: 10 } }));
      expect(output).toContain(`job error ${MASKED}`);
      // The admin page's copies: Activity, and the failed server.
      const login = await fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams({ token: TOKEN }), redirect: "manual" });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
      const page = async (name: string) => (await fetch(`${url}/ui/${name}`, { headers: { cookie } })).text();
      const calls = await Promise.all(Array.from({ length: 12 }, (_, i) => page(`call?id=${i + 1}`)));
      expect(calls.filter((shown) => shown.includes(MASKED)).length).toBeGreaterThan(5);
      for (const shown of [await page("activity"), ...calls]) expect(shown).not.toContain(SECRET);
      // The Servers page shows each server's command line, which is the config's own text; what the server wrote is masked.
      expect(await page("./")).toContain(`fatal: bad key ${MASKED}`);
    } finally {
      await client.close();
    }
    // Nothing codemux wrote holds the secret: its log, the audit log, the jobs journal and transcripts. The config
    // file holds it (it starts the servers that say it), and so does the catalog cache (tool definitions and
    // instructions are kept as the servers listed them, see SECURITY.md).
    expect(stderr()).not.toContain(SECRET);
    const written = filesUnder(dir, (path) => path === "codemux.json" || path.startsWith(join(".codemux", "cache")));
    expect(written.map((f) => relative(dir, f.path))).toEqual(expect.arrayContaining([join(".codemux", "audit", "audit.jsonl")]));
    expect(written.filter((f) => f.text.includes(SECRET)).map((f) => relative(dir, f.path))).toEqual([]);
    // The journal kept the jobs' progress and errors, masked.
    const journal = written.filter((f) => relative(dir, f.path).startsWith(join(".codemux", "jobs"))).map((f) => f.text);
    expect(journal.join("\n")).toContain(`job progress ${MASKED}`);
    expect(journal.join("\n")).toContain(`job error ${MASKED}`);
  });
});
