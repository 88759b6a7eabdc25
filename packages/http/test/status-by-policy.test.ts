import { Codemux } from "@codemux/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer, httpCallRecorders } from "../src/index";
import { bearer, config, json, misbehaving, serve, type Served } from "./helpers";

/**
 * What status answers say about the catalog, from outside over real HTTP with several principals: a
 * probe without a token learns only ready or not; with a token, /readyz and /metrics name only the
 * servers the caller's policy lets it know of, and count only the tools it sees.
 */

const T = { alice: "alice-status-token-0123456789", bob: "bob-status-token-0123456789", carol: "carol-status-token-0123456789" };
/** Words only the hidden servers carry: none may reach a principal whose policy hides them. */
const HIDDEN = ["vault", "broken", "top secret failure"];

describe("status answers, by the caller's policy", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(
      { tokens: Object.entries(T).map(([name, token]) => ({ name, token })) },
      { m: misbehaving(), vault: misbehaving(), broken: misbehaving("--stderr", "fatal: top secret failure", "--exit-at-start") },
      {
        policies: {
          default: "deny",
          rules: [
            { name: "m-only", principals: ["token:alice"], groups: [], scopes: [], tools: ["m"], exclude: [], readOnly: false },
            { name: "everything", principals: ["token:bob"], groups: [], scopes: [], tools: ["*"], exclude: [], readOnly: false },
            { name: "one-tool", principals: ["token:carol"], groups: [], scopes: [], tools: ["m__echo"], exclude: [], readOnly: false },
          ],
        },
      },
    );
    // One call on each server that answers, so the per-server counters have lines for both.
    for (const [token, tool] of [
      [T.alice, "m__echo"],
      [T.bob, "vault__echo"],
    ] as const) {
      const answer = await fetch(`${s.url}/v1/tools/${tool}/call`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: '{"text":"x"}',
      });
      expect(answer.status).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.close();
  });

  const readyz = async (token?: string) => {
    const response = await fetch(`${s.url}/readyz`, token ? { headers: bearer(token) } : {});
    return { status: response.status, text: await response.text() };
  };
  const metrics = async (token: string) => (await fetch(`${s.url}/metrics`, { headers: bearer(token) })).text();
  const toolsSeenBy = async (token: string) => (await json(await fetch(`${s.url}/v1/tools`, { headers: bearer(token) }))).total;

  it("tells a probe without a token ready or not by its status code, and nothing else", async () => {
    const probe = await readyz();
    expect(probe.status).toBe(200);
    expect(JSON.parse(probe.text)).toEqual({ status: "ready" });
  });

  it("names in /readyz only the servers the caller may know of, with their states, errors and tools as it sees them", async () => {
    const alice = await readyz(T.alice);
    expect(alice.status).toBe(200);
    const aliceBody = JSON.parse(alice.text);
    expect(aliceBody.servers.map((server: { name: string }) => server.name)).toEqual(["m"]);
    expect(aliceBody.tools).toBe(await toolsSeenBy(T.alice));
    for (const word of HIDDEN) expect(alice.text).not.toContain(word);

    // A rule showing one tool of a server names that server, and counts that one tool.
    const carol = JSON.parse((await readyz(T.carol)).text);
    expect(carol.servers.map((server: { name: string }) => server.name)).toEqual(["m"]);
    expect(carol.tools).toBe(1);

    const bob = JSON.parse((await readyz(T.bob)).text);
    expect(bob.servers.map((server: { name: string }) => server.name).sort()).toEqual(["broken", "m", "vault"]);
    expect(bob.servers.find((server: { name: string }) => server.name === "broken")).toMatchObject({
      state: "failed",
      error: expect.stringContaining("top secret failure"),
    });
    expect(bob.tools).toBe(await toolsSeenBy(T.bob));
    expect(bob.tools).toBeGreaterThan(aliceBody.tools);
  });

  it("leaves out of /metrics every sample of a server the caller may not know of, and counts servers and tools as it sees them", async () => {
    const alice = await metrics(T.alice);
    expect(alice).toMatch(/^codemux_tool_calls_total\{origin="rest",server="m"\} 1$/m);
    for (const word of HIDDEN) expect(alice).not.toContain(word);
    expect(alice).toMatch(/^codemux_servers\{state="ready"\} 1$/m);
    expect(alice).not.toMatch(/^codemux_servers\{state="failed"\}/m);
    expect(alice).toMatch(new RegExp(`^codemux_tools ${await toolsSeenBy(T.alice)}$`, "m"));

    const bob = await metrics(T.bob);
    expect(bob).toMatch(/^codemux_tool_calls_total\{origin="rest",server="vault"\} 1$/m);
    expect(bob).toMatch(/^codemux_tool_call_duration_seconds_count\{server="vault"\} 1$/m);
    expect(bob).toMatch(/^codemux_servers\{state="ready"\} 2$/m);
    expect(bob).toMatch(/^codemux_servers\{state="failed"\} 1$/m);
    expect(bob).toMatch(new RegExp(`^codemux_tools ${await toolsSeenBy(T.bob)}$`, "m"));
    // A plugin's own metric labelled by server is filtered the same way.
    s.http.metrics.counter("myplugin_hits_total", "Hits of my plugin, by server.").inc({ server: "vault" });
    expect(await metrics(T.bob)).toContain('myplugin_hits_total{server="vault"} 1');
    expect(await metrics(T.alice)).not.toContain('myplugin_hits_total{server="vault"}');
  });
});

describe("readiness without a token, while starting and draining", () => {
  it("answers 503 starting while a server still connects, and 503 draining once the instance drains", async () => {
    const recorders = httpCallRecorders();
    const core = new Codemux({ config: config({ m: misbehaving(), late: misbehaving("--start-delay-ms", "60000") }), middleware: recorders.middleware });
    core.start();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: T.alice }], log: () => undefined, recorders });
    await http.listen();
    try {
      const starting = await fetch(`${http.url}/readyz`);
      expect([starting.status, await starting.json()]).toEqual([503, { status: "starting" }]);
      // A call in flight keeps the draining instance listening until it ends.
      const call = fetch(`${http.url}/v1/tools/m__slow/call`, {
        method: "POST",
        headers: { ...bearer(T.alice), "content-type": "application/json" },
        body: '{"ms":1500}',
      });
      const calling = () => fetch(`${http.url}/metrics`, { headers: bearer(T.alice) }).then((r) => r.text());
      while (!(await calling()).includes('codemux_tool_calls_total{origin="rest",server="m"} 1')) await new Promise((r) => setImmediate(r));
      const draining = http.drain(10_000);
      const probe = await fetch(`${http.url}/readyz`);
      expect([probe.status, await probe.json()]).toEqual([503, { status: "draining" }]);
      expect((await call).status).toBe(200);
      await draining;
    } finally {
      await http.close();
      await core.close();
    }
  });
});
