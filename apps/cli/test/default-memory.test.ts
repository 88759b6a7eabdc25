import type { ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const ALICE = "alice-default-memory-token-0123456789";
const BOB = "bob-default-memory-token-0123456789";

let dir: string;
let home: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  // No codemux.json here nor in CODEMUX_HOME: codemux serves the built-in default.
  dir = await mkdtemp(join(tmpdir(), "codemux-default-memory-"));
  home = await mkdtemp(join(tmpdir(), "codemux-default-memory-home-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all([dir, home].map((d) => rm(d, { recursive: true, force: true })));
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") });

/** Calls one tool over REST as the holder of `token`; answers its value. */
async function call({ url, token }: { url: string; token: string }, tool: string, args: Record<string, unknown>): Promise<unknown> {
  const answer = await fetch(`${url}/v1/tools/${tool}/call`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(args),
  });
  const body = (await answer.json()) as { value?: unknown };
  expect(answer.status, JSON.stringify(body)).toBe(200);
  return body.value;
}

describe("the built-in default served over HTTP to several principals", () => {
  it("keeps each principal's memory apart (what alice stores bob cannot read), and says so at start", async () => {
    const { url, stderr } = await serveCli(["serve", "--http", ":0", "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], {
      cwd: dir,
      env: env(),
      started,
    });
    expect(stderr()).toContain(
      `the built-in default serves several principals: each gets a memory server and graph of its own (under ${join(home, ".codemux", "graphs")})`,
    );
    await call({ url, token: ALICE }, "memory__create_entities", {
      entities: [{ name: "alice-plan", entityType: "note", observations: ["the launch is on Friday"] }],
    });
    expect(JSON.stringify(await call({ url, token: ALICE }, "memory__read_graph", {}))).toContain("the launch is on Friday");
    const bobs = JSON.stringify(await call({ url, token: BOB }, "memory__read_graph", {}));
    expect(bobs).not.toContain("alice-plan");
    expect(JSON.stringify(await call({ url, token: BOB }, "memory__search_nodes", { query: "launch" }))).not.toContain("alice-plan");
    // Each principal's graph is a file of its own, in a folder named by a hash of the principal.
    expect(await readdir(join(home, ".codemux", "graphs", "principals"))).toHaveLength(2);

    // Forgotten while it serves: alice's memory server stops and her graph goes; bob's stays.
    const forgot = await runCli(["forget", "alice"], { cwd: dir, env: env() });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stdout).toContain("1 server's folder for it (its own instance's)");
    expect(await readdir(join(home, ".codemux", "graphs", "principals"))).toHaveLength(1);
    expect(JSON.stringify(await call({ url, token: ALICE }, "memory__read_graph", {}))).not.toContain("alice-plan");
    expect(JSON.stringify(await call({ url, token: BOB }, "memory__read_graph", {}))).toEqual(bobs);
  });
});
