import { misbehavingServerPath } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli, stopAll } from "./serve-cli";

const require = createRequire(import.meta.url);
const fsServer = join(dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")), "dist", "index.js");

let dir: string;
const env = () => ({ PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") });
const codemux = (args: string[]) => runCli(args, { cwd: dir, env: env() });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-policy-"));
  await writeFile(join(dir, "notes.txt"), "alpha\n");
  await writeFile(
    join(dir, "codemux.json"),
    JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [fsServer, dir] } },
      policies: {
        rules: [
          { name: "ci", principals: ["token:ci-*"], tools: ["fs__read_*", "github__get_*"], callsPerMinute: 30 },
          { name: "ops", groups: ["ops"], tools: ["*"], readOnly: true },
          { name: "owner", principals: ["local"], tools: ["fs__read_*"] },
          // A bare name in the config is the token's, as on the command line.
          { name: "bob", principals: ["bob"], tools: ["fs__list_*"] },
        ],
      },
    }),
  );
  await writeFile(join(dir, "bad.json"), JSON.stringify({ mcpServers: {}, policies: { rules: [{ principals: ["token:a"], tools: ["*"], readOnly: "yes" }] } }));
});
const started: ChildProcess[] = [];
afterAll(async () => {
  await stopAll(started, "SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("codemux policy check", () => {
  it("explains a tool the principal sees and its server has: the rule, why it matched, and its limits (exit 0)", async () => {
    const run = await codemux(["policy", "check", "token:ci-nightly", "fs__read_text_file"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Rule "ci" decides for "token:ci-nightly": its principal "token:ci-nightly" matches "token:ci-*".\nfs__read_text_file is seen (the rule\'s tools "fs__read_*" match it).\nIt may be called.\nCalls per minute: 30 for this principal, from every surface together.\n',
    );
  });

  it("reads the catalog: a read-only rule is decided by the tool's annotations, and a tool no server has is said to be missing (exit 1)", async () => {
    const read = await codemux(["policy", "check", "oauth:https://idp.example#7", "fs__read_text_file", "--groups", "dev,ops"]);
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('Rule "ops" decides for "oauth:https://idp.example#7": its group "ops" matches "ops".');
    expect(read.stdout).toContain("It may be called: its server marks it read-only (readOnlyHint: true)");
    const write = await codemux(["policy", "check", "oauth:https://idp.example#7", "fs__write_file", "--groups", "ops"]);
    expect(write.code).toBe(1);
    expect(write.stdout).toContain("It may not be called: its server does not mark it read-only (readOnlyHint: true)");
    const unknown = await codemux(["policy", "check", "oauth:https://idp.example#7", "fs__read_secrets", "--groups", "ops"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain(
      'fs__read_secrets would be seen (the rule\'s tools "*" match it), but it is not in the catalog: No tool named "fs__read_secrets".',
    );
    expect(unknown.stdout).not.toContain("may be called");
    const noServer = await codemux(["policy", "check", "token:ci-nightly", "github__get_issue"]);
    expect(noServer.code).toBe(1);
    expect(noServer.stdout).toContain(
      'github__get_issue would be seen (the rule\'s tools "github__get_*" match it), but it is not in the catalog: the config has no server "github" (its servers: fs).',
    );
  });

  it("explains a hidden tool (exit 1), and the default for a principal no rule names", async () => {
    const hidden = await codemux(["policy", "check", "token:ci-nightly", "fs__write_file", "--config", "codemux.json"]);
    expect(hidden.code).toBe(1);
    expect(hidden.stdout).toContain(
      'fs__write_file is hidden: none of the rule\'s tools ("fs__read_*", "github__get_*") matches it. It answers as an unknown tool.',
    );
    const stranger = await codemux(["policy", "check", "token:stranger", "fs__read_text_file"]);
    expect(stranger.code).toBe(1);
    expect(stranger.stdout).toContain('Rule "default" decides for "token:stranger": no rule matches it and policies.default is "deny".');
  });

  it("takes a bare name as the token's principal, as the config does", async () => {
    const bare = await codemux(["policy", "check", "bob", "fs__list_directory"]);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain('Rule "bob" decides for "token:bob": its principal "token:bob" matches "token:bob".');
    const full = await codemux(["policy", "check", "token:ci-nightly", "fs__read_text_file"]);
    const short = await codemux(["policy", "check", "ci-nightly", "fs__read_text_file"]);
    expect(short.stdout).toBe(full.stdout);
  });

  it("stops with the file and the field of a mistake in the policies, never a stack", async () => {
    const run = await codemux(["policy", "check", "token:a", "fs__read_text_file", "--config", "bad.json"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`Invalid config ${join(dir, "bad.json")}: policies.rules[0].readOnly: expected true or false (got "yes")`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const listed = await codemux(["list", "--config", "bad.json"]);
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toContain("policies.rules[0].readOnly: expected true or false");
  });
});

describe("policies over stdio", () => {
  it("hold for the owner when a rule names local: a tool it hides is unknown, one it shows works", async () => {
    const read = await codemux(["call", "fs__read_text_file", JSON.stringify({ path: join(dir, "notes.txt") })]);
    expect(read.stdout).toContain("alpha");
    const write = await codemux(["call", "fs__write_file", JSON.stringify({ path: join(dir, "new.txt"), content: "x" })]);
    expect(write.code).not.toBe(0);
    expect(`${write.stdout}${write.stderr}`).toContain('No tool named "fs__write_file"');
  });
});

describe("policies when serving over HTTP", () => {
  it("apply to a token's principal, and a reload reads them again", async () => {
    const file = join(dir, "served.json");
    const served = (tools: string[]) =>
      JSON.stringify({
        mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } },
        policies: { rules: [{ name: "laptop", principals: ["token:laptop"], tools }] },
      });
    await writeFile(file, served(["m__echo"]));
    const secret = "policy-cli-token-0123456789";
    const { child, url } = await serveCli(["serve", "--http", ":0", "--config", file, "--token", `laptop:${secret}`, "--compat-routes"], {
      cwd: dir,
      env: env(),
      started,
    });
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const names = async () =>
      (((await (await fetch(`${url}/v1/tools`, { headers })).json()) as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    try {
      expect(await names()).toEqual(["m__echo"]);
      await writeFile(file, served(["m"]));
      expect((await fetch(`${url}/restart`, { method: "POST", headers, body: "{}" })).status).toBe(200);
      expect(await names()).toContain("m__counter");
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });
});
