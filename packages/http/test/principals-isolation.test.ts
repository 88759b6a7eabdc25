import type { Logger } from "@codemux/core";
import { loadPlugins, type LoadedPlugins } from "@codemux/hooks";
import { createJobs, type Jobs } from "@codemux/jobs";
import { parseConfig } from "@codemux/pool";
import { Codemux } from "@codemux/server";
import { askingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { referenceServer, restAs, textOf } from "./helpers";

/**
 * Three principals (alice and bob over MCP, carol over REST) on one shared gateway, as clients reach it:
 * real HTTP, the SDK's Streamable HTTP client, real downstream servers. Each test is one class of the
 * ways a principal could reach another's data, the host's files or a secret.
 */
const TOKENS = { alice: "alice-token-isolation-0001", bob: "bob-token-isolation-0002", carol: "carol-token-isolation-0003" };
const fsServer = referenceServer("@modelcontextprotocol/server-filesystem");
const asking = (...args: string[]) => ({ command: process.execPath, args: [askingServerPath, ...args] });

interface Principal {
  client: Client;
  /** Questions this client was asked (elicitation messages). */
  asked: string[];
  /** Log lines it received (their data). */
  logs: string[];
  /** How many times codemux asked it for its roots. */
  rootsAsked: number;
}

let dir: string;
let rootDir: string;
let outsideDir: string;
let core: Codemux;
let http: CodemuxHttpServer;
let plugins: LoadedPlugins;
let jobs: Jobs;
let alice: Principal;
let bob: Principal;
const ownLog: string[] = [];

async function connect(token: string, roots: string[] = []): Promise<Principal> {
  const principal: Principal = {
    client: new Client({ name: "isolation", version: "1.0.0" }, { capabilities: { elicitation: {}, roots: { listChanged: true } } }),
    asked: [],
    logs: [],
    rootsAsked: 0,
  };
  principal.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    principal.asked.push(request.params.message);
    return { action: "accept", content: { answer: "yes" } };
  });
  principal.client.setRequestHandler(ListRootsRequestSchema, async () => {
    principal.rootsAsked++;
    return { roots: roots.map((root) => ({ uri: pathToFileURL(root).href })) };
  });
  principal.client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    principal.logs.push(String(notification.params.data));
  });
  await principal.client.connect(
    new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  await principal.client.setLoggingLevel("debug");
  return principal;
}

const call = async (who: Principal, name: string, args: Record<string, unknown> = {}) =>
  (await who.client.callTool({ name: "call_tool", arguments: { name, args } })) as CallToolResult;
const tool = async (who: Principal, name: string, args: Record<string, unknown> = {}) =>
  (await who.client.callTool({ name, arguments: args })) as CallToolResult;
const execute = async (who: Principal, code: string) => JSON.parse(textOf(await tool(who, "execute_code", { code }))) as Record<string, unknown>;

/** One REST call as `token`'s principal: the status and the parsed body. */
const rest = (token: string, path: string, body?: unknown) => restAs(http.url)(token, path, body);
const restCall = (token: string, name: string, args: Record<string, unknown> = {}) => rest(token, `/v1/tools/${name}/call`, args);

beforeAll(async () => {
  // realpath: the filesystem server names its folders by their real path.
  dir = await realpath(await mkdtemp(join(tmpdir(), "codemux-principals-")));
  rootDir = join(dir, "root");
  outsideDir = join(dir, "outside");
  await mkdir(join(rootDir, "sub"), { recursive: true });
  await mkdir(outsideDir);
  await writeFile(join(rootDir, "shared.txt"), "for everyone");
  await writeFile(join(outsideDir, "secret.txt"), "OUTSIDE-THE-ROOT-SECRET");
  const config = parseConfig(
    JSON.stringify({
      mcpServers: {
        // Started on two folders, told codemux's root as its only root (its entry sets none).
        fs: { command: process.execPath, args: [fsServer, rootDir, outsideDir] },
        ask: { ...asking(), roots: ["root/sub"] },
        own: asking("--scheme", "own"),
        mine: asking("--scheme", "mine"),
        locked: asking("--scheme", "locked"),
      },
    }),
    { file: join(dir, "codemux.json"), env: process.env },
  );
  const logger: Logger = {
    debug: (line) => void ownLog.push(line),
    info: (line) => void ownLog.push(line),
    warn: (line) => void ownLog.push(line),
    error: (line) => void ownLog.push(line),
  };
  plugins = await loadPlugins({
    config: {
      plugins: {
        audit: { file: join(dir, "audit.jsonl") },
        guard: { destructive: false, deny: ["locked__resources/read"] },
        redact: { patterns: [{ name: "corp-id", regex: "CORP-\\d{6}" }] },
      },
    },
    configFile: join(dir, "codemux.json"),
    logger,
    dataDir: dir,
  });
  jobs = createJobs({ dataDir: dir, logger });
  core = new Codemux({
    config,
    root: rootDir,
    logger,
    dataDir: dir,
    middleware: [plugins.middleware, jobs.middleware],
    jobs: jobs.runner,
    metaTools: jobs.metaTools,
  });
  core.start();
  await core.ready();
  http = new CodemuxHttpServer(core, {
    port: 0,
    compatRoutes: true,
    tokens: Object.entries(TOKENS).map(([name, token]) => ({ name, token })),
    log: () => undefined,
  });
  await http.listen();
  alice = await connect(TOKENS.alice, [outsideDir]);
  bob = await connect(TOKENS.bob, [outsideDir]);
});
afterAll(async () => {
  await Promise.all([alice?.client.close(), bob?.client.close()]);
  await http?.close();
  await jobs?.close();
  await core?.close();
  await plugins?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("roots: one client cannot widen what a shared server may touch", () => {
  it("answers a shared server's roots/list from its config entry (or codemux's root), never from a client, and does not pass on a client's roots/list_changed", async () => {
    const configured = { roots: [{ uri: pathToFileURL(join(rootDir, "sub")).href }] };
    // Asked during alice's own call and during carol's REST call: the entry's roots, not alice's folder.
    expect(JSON.parse(textOf(await call(alice, "ask__roots")))).toEqual(configured);
    expect((await restCall(TOKENS.carol, "ask__roots")).body.value).toEqual(configured);

    await alice.client.sendRootsListChanged();
    // The server would ask again on a roots/list_changed; it never gets one (a few round trips on alice's session, after hers).
    for (let i = 0; i < 3; i++) expect(JSON.parse(textOf(await call(alice, "ask__roots_seen")))).toEqual([]);
    // The filesystem server (no roots in its entry) still serves codemux's root alone, to everyone.
    const allowed = (await restCall(TOKENS.carol, "fs__list_allowed_directories")).body.value as { content: string };
    expect(allowed.content.split("\n").slice(1)).toEqual([rootDir]);
    const outside = await restCall(TOKENS.carol, "fs__read_text_file", { path: join(outsideDir, "secret.txt") });
    expect(JSON.stringify(outside.body)).not.toContain("OUTSIDE-THE-ROOT-SECRET");
    expect(outside.status).toBe(422);
    expect((await restCall(TOKENS.carol, "fs__read_text_file", { path: join(rootDir, "shared.txt") })).body.value).toEqual({ content: "for everyone" });
    expect(alice.rootsAsked + bob.rootsAsked).toBe(0);
  });
});

describe("the relay: a question or log line reaches only the principal whose call caused it", () => {
  it("puts a question asked during a principal's own call to that client", async () => {
    expect(textOf(await call(alice, "own__ask", { message: "alice asks herself" }))).toContain("accept");
    expect(alice.asked).toContain("alice asks herself");
  });

  it("refuses a question asked during a REST call, which has no client to ask, instead of putting it to a connected one", async () => {
    const refused = await restCall(TOKENS.carol, "locked__ask", { message: "carol's question over REST" });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toMatch(/no MCP client to ask/);
    expect([...alice.asked, ...bob.asked]).not.toContain("carol's question over REST");
  });

  it("refuses a question that arrives after its caller's call ended, whoever has a call in flight then", async () => {
    // Asked when the next call starts: bob's call is then the only one in flight.
    expect(textOf(await call(alice, "ask__ask", { message: "alice's late question", when: "next-call" }))).toBe("scheduled for the next call");
    expect(textOf(await call(bob, "ask__slow", { ms: 10 }))).toBe("slept");
    // Asked a moment after alice's answer, while bob holds a call he started before hers.
    const holding = call(bob, "ask__slow", { ms: 1500 });
    expect(textOf(await call(alice, "ask__ask", { message: "alice's question after her answer", when: "after-answer", delayMs: 200 }))).toBe(
      "scheduled after the answer",
    );
    await holding;
    // Alice's call did not wait for bob's (principals never wait for each other): her question came while his call, which hers overlapped, was in flight.
    let late: Array<{ message: string; answer?: unknown; error?: string }> = [];
    await expect.poll(async () => (late = JSON.parse(textOf(await call(alice, "ask__late")))).length).toBe(2);
    expect(late.map((q) => q.message)).toEqual(["alice's late question", "alice's question after her answer"]);
    for (const question of late) {
      expect(question.answer).toBeUndefined();
      expect(question.error).toMatch(/codemux refused elicitation\/create/);
    }
    expect(late[0]?.error).toMatch(/another client's call on it ended/);
    expect(bob.asked).toEqual([]);
  });

  it("sends a server's log line only to the session whose call caused it; one it cannot place stays in codemux's own log", async () => {
    await call(alice, "own__log", { data: "alice's own line" });
    await restCall(TOKENS.carol, "ask__log", { data: "carol's line over REST" });
    await call(alice, "ask__log", { data: "alice's late line", when: "next-call" });
    await call(bob, "ask__slow", { ms: 10 });
    // A line of bob's own comes after all of those on his stream: once he has it, he would have had them.
    await call(bob, "mine__log", { data: "bob's own line" });
    await expect.poll(() => bob.logs).toContain("bob's own line");
    await expect.poll(() => alice.logs).toContain("alice's own line");
    expect(bob.logs).toEqual(["bob's own line"]);
    expect(alice.logs).toEqual(["alice's own line"]);
    expect(ownLog).toEqual(expect.arrayContaining(["[ask/asking] carol's line over REST", "[ask/asking] alice's late line"]));
  });
});

describe("skills: a principal's skills are its own, and the type checker reads nothing of the host", () => {
  const SKILL = `export const aliceStamp = "ALICE-SKILL-CONTENT-77" as const;

export async function payrollRotation(input: { quarter: number }): Promise<number> {
  return input.quarter;
}
`;

  it("lists another principal's skill in neither REST search nor the compat routes", async () => {
    const saved = await tool(alice, "save_skill", { name: "payrollRotation", code: SKILL, description: "Rotate the payroll ledger for a quarter." });
    expect(textOf(saved)).toContain("Saved mcp/skills/payrollRotation");
    const names = (body: Record<string, unknown>) => JSON.stringify(body);
    expect(names((await rest(TOKENS.alice, "/v1/tools?q=rotate%20payroll%20ledger")).body)).toContain("skill:payrollRotation");
    expect(names((await rest(TOKENS.alice, "/retrieve_tools", { query: "rotate payroll ledger" })).body)).toContain("skill:payrollRotation");
    expect(names((await rest(TOKENS.alice, "/tools?q=rotate%20payroll%20ledger")).body)).toContain("skill:payrollRotation");
    for (const token of [TOKENS.bob, TOKENS.carol]) {
      expect(names((await rest(token, "/v1/tools?q=rotate%20payroll%20ledger")).body)).not.toContain("payrollRotation");
      expect(names((await rest(token, "/retrieve_tools", { query: "rotate payroll ledger" })).body)).not.toContain("payrollRotation");
      expect(names((await rest(token, "/tools?q=rotate%20payroll%20ledger")).body)).not.toContain("payrollRotation");
    }
    expect(textOf(await tool(bob, "search_tools", { query: "rotate payroll ledger" }))).not.toContain("payrollRotation");
  });

  it("refuses a skill that imports another principal's skill file, a host file or a passwd-like file, without echoing a byte of it", async () => {
    // token:alice has a colon, so its folder is named by a digest; hers is the only one holding a skill yet.
    const [aliceFolder] = await readdir(join(dir, "skills"));
    const aliceFile = join(dir, "skills", aliceFolder as string, "payrollRotation.ts");
    expect(await readFile(aliceFile, "utf8")).toContain("ALICE-SKILL-CONTENT-77");
    const hostFile = join(dir, "host-config.ts");
    await writeFile(hostFile, 'export const aliceStamp = "HOST-FILE-CONTENT-99" as const;\n');
    const passwd = join(dir, "passwd");
    await writeFile(passwd, "root:x:0:0:HOST-PASSWD-LINE:/root:/bin/sh\n");
    // Assigned to another literal type, a constant's value is spelled out in the type error.
    const reading = (specifier: string) => `import { aliceStamp } from ${JSON.stringify(specifier)};
export async function peek(input: { n: number }): Promise<number> {
  const shown: "x" = aliceStamp;
  return shown.length + input.n;
}
`;
    const attempts = [
      reading(aliceFile),
      reading(aliceFile.replace(/\.ts$/, "")),
      reading(`${"../".repeat(12)}${aliceFile.slice(1)}`),
      reading(hostFile),
      `/// <reference path=${JSON.stringify(passwd)} />\nexport async function peek(input: { n: number }): Promise<number> { return input.n; }\n`,
    ];
    for (const code of attempts) {
      const refused = await tool(bob, "save_skill", { name: "peek", code, description: "Reads what is not its own." });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/not saved/);
      for (const content of ["ALICE-SKILL-CONTENT-77", "HOST-FILE-CONTENT-99", "HOST-PASSWD-LINE"]) expect(textOf(refused)).not.toContain(content);
    }
  });
});

describe("redaction cannot be walked around", () => {
  const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
  const SECRETS = [TOKEN, "CORP-111111", "CORP-222222", "CORP-333333", "CORP-444444", "CORP-555555", "AKIAIOSFODNN7EXAMPLE", "hunter22hunter"];
  const leaks = (value: unknown) => SECRETS.filter((secret) => JSON.stringify(value).includes(secret));
  const result = {
    content: [
      { type: "text", text: `the token is ${TOKEN.slice(0, 16)}` },
      { type: "text", text: `${TOKEN.slice(16)} and more` },
      { type: "resource_link", uri: "https://example.com/CORP-111111", name: "CORP-222222", description: "key AKIAIOSFODNN7EXAMPLE" },
      { type: "resource", resource: { uri: "asking://text/x", mimeType: "text/plain", text: "password=hunter22hunter" } },
      { type: "resource", resource: { uri: "asking://text/y", mimeType: "text/plain", blob: Buffer.from("id CORP-333333").toString("base64") } },
    ],
    structuredContent: { "CORP-444444": "a secret as a key", nested: { [TOKEN]: 1 } },
  };
  const blobs = (value: unknown) =>
    JSON.stringify(value).replace(/"blob":"([^"]*)"/g, (_m, blob: string) => `"blob":${JSON.stringify(Buffer.from(blob, "base64").toString())}`);

  it("masks every part type, structured keys and values, and a secret split across two text parts, however a snippet joins them", async () => {
    const direct = await call(alice, "ask__result", { result });
    expect(leaks(blobs(direct))).toEqual([]);
    expect(textOf(direct)).toContain("[REDACTED:github-token]");
    const run = await execute(
      alice,
      `import { callToolRaw } from "mcp/bridge";
import { result } from "mcp/servers/ask/result";
const raw = await callToolRaw("ask__result", { result: ${JSON.stringify(result)} });
const texts = raw.content.flatMap((p) => (p.type === "text" ? [p.text] : []));
console.log(texts.join(""));
console.log(texts.join("\\n"));
export default { raw, value: await result({ result: ${JSON.stringify(result)} }) };`,
    );
    expect(leaks(blobs(run))).toEqual([]);
    expect(String(run.stdout)).toContain("[REDACTED:github-token]");
  });

  it("masks a server's JSON-RPC error message in call_tool, REST, a snippet's catch and stdout, and a job's output", async () => {
    const message = "the ledger failed for CORP-555555";
    expect(leaks(await call(alice, "ask__throw", { message }))).toEqual([]);
    expect(textOf(await call(alice, "ask__throw", { message }))).toContain("[REDACTED:corp-id]");
    const viaRest = await restCall(TOKENS.carol, "ask__throw", { message });
    expect(viaRest.status).toBeGreaterThanOrEqual(400);
    expect(leaks(viaRest.body)).toEqual([]);
    const caught = await execute(
      alice,
      `import { callTool } from "mcp/bridge";
try { await callTool("ask__throw", { message: ${JSON.stringify(message)} }); } catch (error) { console.log((error as Error).message); }
await callTool("ask__throw", { message: ${JSON.stringify(message)} });`,
    );
    expect(String(caught.stdout)).toContain("[REDACTED:corp-id]");
    expect(leaks(caught)).toEqual([]);
    const started = textOf(await tool(alice, "call_tool", { name: "ask__throw", args: { message }, background: true }));
    const id = /job (\S+) in the background/.exec(started)?.[1] as string;
    const output = await tool(alice, "jobs", { action: "output", ids: [id], wait_up_to: 30 });
    expect(textOf(output)).toContain("[REDACTED:corp-id]");
    expect(leaks(output)).toEqual([]);
  });

  it("reads resources through the plugins: redacted over MCP and in snippets, audited, and refused by the guard", async () => {
    const uri = `asking://text/${Buffer.from("the id is CORP-555555").toString("base64url")}`;
    const read = await alice.client.readResource({ uri });
    expect(leaks(blobs(read))).toEqual([]);
    expect(read.contents[0]).toMatchObject({ text: "the id is [REDACTED:corp-id]" });
    const run = await execute(alice, `import { readResource } from "mcp/resources";\nexport default await readResource(${JSON.stringify(uri)});`);
    expect(leaks(blobs(run))).toEqual([]);
    await expect(alice.client.readResource({ uri: "locked://text/closed" })).rejects.toThrow(/denied by the guard plugin/);
    const denied = await execute(alice, `import { readResource } from "mcp/resources";\nexport default await readResource("locked://text/closed");`);
    expect(JSON.stringify(denied.error)).toMatch(/denied by the guard plugin/);
    await (plugins.plugins.find((plugin) => plugin.name === "audit") as unknown as { flush(): Promise<void> }).flush();
    const audit = (await readFile(join(dir, "audit.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const reads = audit.filter((line) => line.tool === "resources/read");
    expect(reads.map((line) => [line.principal, line.server, line.outcome])).toEqual(
      expect.arrayContaining([
        ["token:alice", "ask", "ok"],
        ["token:alice", "locked", "refused"],
      ]),
    );
  });
});
