import { misbehavingServerPath } from "@codemux/test-servers";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cli = resolve(import.meta.dirname, "../dist/index.js");
const wrapper = resolve(import.meta.dirname, "fixtures/outlives-stdin.mjs");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-exit-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function codemux(args: string[], input = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, "--no-cache", ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, "home") },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

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
    const result = await codemux([command, ...args, "--config", config], "export default 1;\n");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(expected);
    expect((await readFile(log, "utf8")).split("\n").filter((line) => line === "SIGTERM")).toHaveLength(1);
  });
});
