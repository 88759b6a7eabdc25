import { misbehavingEntry } from "@codemux/test-servers";
import { spawnSync, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

describe("the config, read once and checked in one place", () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started) child.kill("SIGKILL");
  });

  it("warns about a misspelled key when a command starts", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: {}, retenton: {} }));
    const run = await runCli(["list", "--no-cache"], { cwd: dir, env: { ...process.env, CODEMUX_HOME: join(dir, "home") } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('unknown key "retenton" is ignored (did you mean "retention"?)');
  }, 60_000);

  it.skipIf(process.platform === "win32")(
    "serve --http reads its config file once: a named pipe written once starts it",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
      const fifo = join(dir, "codemux.json");
      expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
      const env = { ...process.env, CODEMUX_HOME: join(dir, "home") };
      const serving = serveCli(["serve", "--http", "127.0.0.1:0", "--config", fifo, "--no-watch", "--no-cache"], { cwd: dir, env, started });
      // One writer, once: a second read of the pipe would wait for another writer for ever, and the start with it.
      await writeFile(fifo, JSON.stringify({ mcpServers: { m: misbehavingEntry("m") }, resultFormat: "json", http: { trustedProxies: ["127.0.0.1"] } }));
      const { url } = await serving;
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    },
    60_000,
  );
});
