import { misbehavingServerPath } from "@codemux/test-servers";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ServerPool, ServerUnavailableError, type ServerSpec } from "../src/index";
import { processesWith, until } from "./processes";

const nested = fileURLToPath(new URL("./fixtures/nested-codemux.mjs", import.meta.url));
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const stdio = (name: string, command: string, args: string[]): ServerSpec => ({
  name,
  transport: { type: "stdio", command, args, env: {} },
  callTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  tools: {},
});

function recordingLogger(): { warnings: string[]; logger: { debug(): void; info(): void; warn(m: string): void; error(m: string): void } } {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) } };
}

describe("a config that lists codemux itself", () => {
  it("skips the entry with one warning and shows it as skipped with the reason, while the others start", async () => {
    const { warnings, logger } = recordingLogger();
    const pool = new ServerPool([stdio("self", "npx", ["-y", "codemux", "--config", "x.json"]), stdio("good", process.execPath, [misbehavingServerPath])], {
      logger,
      env: { ...process.env, CODEMUX_DEPTH: undefined },
    });
    cleanup.push(() => pool.close());
    await pool.start();
    const [self, good] = pool.status();
    expect(self).toMatchObject({
      state: "skipped",
      error: expect.stringMatching(/^it starts codemux itself \("npx -y codemux --config x\.json"\), which would start its own servers again without end/),
    });
    expect(good!.state).toBe("ready");
    const error = await pool.callTool("self", "anything").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerUnavailableError);
    expect((error as Error).message).toMatch(/^Server "self" is unavailable: it was not started: it starts codemux itself/);
    expect(await pool.waitFor("self", 1000)).toBe(true);
    expect(warnings.filter((w) => w.includes("codemux itself"))).toHaveLength(1);
  });

  it("stops a loop hidden behind a wrapper: the codemux two levels deep starts no stdio server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "codemux-nested-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, "log.txt");
    const specsFile = join(dir, "specs.json");
    writeFileSync(log, "");
    // A shell line that runs codemux's stand-in: not recognizable as codemux from the command line alone.
    const wrapped = stdio("wrapped", "/bin/sh", ["-c", `"${process.execPath}" "${nested}" "${log}" "${specsFile}"`]);
    wrapped.connectTimeoutMs = 60_000;
    writeFileSync(specsFile, JSON.stringify([wrapped]));
    const pool = new ServerPool([wrapped], { env: { ...process.env, CODEMUX_DEPTH: undefined } });
    cleanup.push(() => until(() => processesWith(dir).length === 0));
    cleanup.push(() => pool.close());
    void pool.start();
    await until(() => /settled 2|start 3/.test(readFileSync(log, "utf8")));
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["start 1", "start 2", "settled 2 wrapped:skipped"]);
  });
});
