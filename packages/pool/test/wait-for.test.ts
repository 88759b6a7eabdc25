import { afterEach, describe, expect, it } from "vitest";
import { misbehavingServerPath } from "@codemux/test-servers";
import { ServerPool, parseConfig } from "../src/index";
import { stdioSpec, textOf } from "./helpers";

const pools: ServerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("a server that never finishes initializing", () => {
  it("holds up neither calls to a healthy server nor waiting for it; waitFor reports each server alone", async () => {
    const pool = new ServerPool([stdioSpec("hung", ["--start-delay-ms", "600000"], { connectTimeoutMs: 600_000 }), stdioSpec("good")]);
    pools.push(pool);
    void pool.start();
    expect(await pool.waitFor("good", 20_000)).toBe(true);
    expect(textOf(await pool.callTool("good", "echo", { text: "not held up" }))).toBe("not held up");
    expect(await pool.waitFor("hung", 50)).toBe(false);
    const [hung, good] = pool.status();
    expect(good!.state).toBe("ready");
    expect(hung).toMatchObject({ state: "connecting", detail: expect.stringMatching(/^starting \(\d+ s\)$/) });
  });

  it("waitFor starts a server nobody started, and resolves true once it has failed", async () => {
    const pool = new ServerPool([stdioSpec("quitter", ["--exit-at-start"])]);
    pools.push(pool);
    expect(await pool.waitFor("quitter", 20_000)).toBe(true);
    expect(pool.status()[0]).toMatchObject({ state: "failed", error: expect.stringContaining("exited with code 3") });
    expect(() => pool.waitFor("nope", 10)).toThrow(/No server named "nope"/);
  });

  it("calls a start a state (starting (N s)), not an error, and keeps the config's mistakes beside it", async () => {
    const config = parseConfig(
      JSON.stringify({
        mcpServers: { hung: { command: process.execPath, args: [misbehavingServerPath, "--start-delay-ms", "600000"], connectTimeoutMS: 100 } },
      }),
      { file: "/x/codemux.json" },
    );
    const pool = new ServerPool(config);
    pools.push(pool);
    void pool.start();
    expect(await pool.waitFor("hung", 50)).toBe(false);
    const status = pool.status()[0]!;
    expect(status.warnings).toEqual(['/x/codemux.json: mcpServers.hung: unknown key "connectTimeoutMS" is ignored (did you mean "connectTimeoutMs"?).']);
    expect(status.detail).toMatch(/^starting \(\d+ s\)$/);
    expect(status.error).toBeUndefined();
  });
});
