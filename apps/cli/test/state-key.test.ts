import { modernServerPath } from "@codemux/test-servers";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const TOKEN = "state-key-test-token-0123456789";
const SHARED = "a key every instance shares, 32 bytes or more";
const OTHER = "another deployment's key, also 32 bytes or more";

type Asked = { resultType?: string; inputRequests?: Record<string, unknown>; requestState?: string };
const ask = { name: "call_tool", arguments: { name: "m__ask", args: { message: "ready?" } } };

describe("the config's stateKey", () => {
  let dir: string;
  const started: ChildProcess[] = [];
  const clients: ModernClient[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-state-key-"));
    // The key comes from the environment through the config, never written in the file.
    const config = { stateKey: "${SHARED_STATE_KEY}", mcpServers: { m: { command: process.execPath, args: [modernServerPath, "--legacy", "reject"] } } };
    await writeFile(join(dir, "codemux.json"), JSON.stringify(config));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  const env = (key: string) => ({
    PATH: process.env.PATH ?? "",
    HOME: dir,
    CODEMUX_HOME: join(dir, `home-${key.length}`),
    CODEMUX_TOKEN: `alice:${TOKEN}`,
    SHARED_STATE_KEY: key,
  });
  const serve = (key: string) => serveCli(["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json")], { cwd: dir, env: env(key), started });
  async function client(url: string): Promise<ModernClient> {
    const made = new ModernClient({ name: "state-key", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: "auto" } });
    await made.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    clients.push(made);
    return made;
  }

  it("lets an instance with the same key take the retry of a state another instance signed, and an instance with another key refuse it", async () => {
    const [a, b, c] = [await serve(SHARED), await serve(SHARED), await serve(OTHER)];
    const asked = (await (await client(a.url)).callTool(ask, { allowInputRequired: true })) as Asked;
    expect(asked.resultType).toBe("input_required");
    const [key] = Object.keys(asked.inputRequests ?? {});
    const retry = { ...ask, inputResponses: { [key as string]: { action: "accept", content: { answer: "yes" } } }, requestState: asked.requestState };
    const answered = (await (await client(b.url)).callTool(retry)) as { content: Array<{ text: string }> };
    expect(JSON.parse(answered.content[0]?.text ?? "{}")).toEqual({ asked: "ready?", answer: { action: "accept", content: { answer: "yes" } } });
    await expect((await client(c.url)).callTool(retry)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("it was not issued to this caller, or it was altered"),
    });
  }, 60_000);

  it("stops serve with a sentence naming the file when the key is too short or its variable is not set", async () => {
    const short = await runCli(["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json")], { cwd: dir, env: env("short") });
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain(
      `Invalid config ${join(dir, "codemux.json")}: stateKey: the key must be at least 32 bytes; generate one with \`openssl rand -hex 32\`.`,
    );
    const { SHARED_STATE_KEY: _, ...unset } = env("");
    const missing = await runCli(["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json")], { cwd: dir, env: unset });
    expect(missing.stderr).toContain("stateKey: the environment variable SHARED_STATE_KEY is not set");
  });
});
