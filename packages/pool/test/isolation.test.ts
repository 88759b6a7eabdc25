import { askingServerPath } from "@codemux/test-servers";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import {
  InstanceLimitError,
  ServerPool,
  authDirectory,
  principalAuthDirectory,
  type InstanceOwner,
  type ServerRequestRelay,
  type ServerSpec,
} from "../src/index";
import { stdioSpec, textOf } from "./helpers";
import { processesWith, until } from "./processes";

const alice1 = { id: "alice-session-1", principal: "token:alice" };
const alice2 = { id: "alice-session-2", principal: "token:alice" };
const bob1 = { id: "bob-session-1", principal: "token:bob" };

/** The misbehaving server, marked so that its processes can be counted; `counter` answers its calls so far and its pid. */
function counting(isolation: "principal" | "session", extra: Partial<ServerSpec> = {}): { spec: ServerSpec; marker: string } {
  const marker = `iso-${randomUUID()}`;
  return { spec: stdioSpec("state", ["--name", marker], { isolation, ...extra }), marker };
}

const counter = async (pool: ServerPool, session: { id: string; principal: string }) =>
  JSON.parse(textOf(await pool.callTool("state", "counter", {}, { session }))) as { calls: number; pid: number };

let pool: ServerPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe.skipIf(process.platform === "win32")("isolated servers: one instance per principal or per session", () => {
  it("isolation principal: each principal gets its own process, shared by its sessions, started at its first call", async () => {
    const { spec, marker } = counting("principal");
    pool = new ServerPool([spec]);
    await pool.start();
    // Only the listing connection runs before anyone calls; it knows the tools.
    expect(processesWith(marker)).toHaveLength(1);
    expect(pool.tools()[0]?.tools.map((t) => t.name)).toContain("counter");
    expect(pool.status()[0]).toMatchObject({ state: "ready", isolation: "principal", instances: 0 });

    const a = await counter(pool, alice1);
    const b = await counter(pool, bob1);
    const a2 = await counter(pool, alice2);
    expect(a.calls).toBe(1);
    expect(b.calls).toBe(1);
    // Alice's second session reaches her own instance: it saw her first call, bob's did not.
    expect(a2).toEqual({ calls: 2, pid: a.pid });
    expect(new Set([a.pid, b.pid]).size).toBe(2);
    expect(pool.status()[0]?.instances).toBe(2);
    expect(processesWith(marker)).toHaveLength(3);
  });

  it("isolation session: each client session gets its own process, ended when the session ends", async () => {
    const { spec, marker } = counting("session");
    pool = new ServerPool([spec]);
    await pool.start();
    const a = await counter(pool, alice1);
    const a2 = await counter(pool, alice2);
    expect(a.calls).toBe(1);
    expect(a2.calls).toBe(1);
    expect(a2.pid).not.toBe(a.pid);
    await pool.closeSession(alice1.id);
    await until(() => processesWith(marker).every((p) => p.pid !== a.pid));
    expect(pool.status()[0]?.instances).toBe(1);
    // The session's next call (were it to come) would start afresh; alice's other session keeps its state.
    expect((await counter(pool, alice2)).calls).toBe(2);
  });

  it("past maxInstances a new owner is refused with a sentence naming the bound, and never handed another owner's instance", async () => {
    const { spec } = counting("principal", { maxInstances: 1 });
    pool = new ServerPool([spec]);
    await pool.start();
    await counter(pool, alice1);
    const refused = counter(pool, bob1);
    await expect(refused).rejects.toBeInstanceOf(InstanceLimitError);
    await expect(refused).rejects.toThrow(/runs one instance per principal and all 1 it may run \(its "maxInstances"\) are in use by others; try again once/);
    // Alice still reaches her own.
    expect((await counter(pool, alice2)).calls).toBe(2);
  });

  it("per session, one principal's sessions hold at most a quarter of maxInstances (at least 2), so others still get theirs", async () => {
    const { spec } = counting("session", { maxInstances: 8 });
    pool = new ServerPool([spec]);
    await pool.start();
    await Promise.all([counter(pool, alice1), counter(pool, alice2)]);
    const third = counter(pool, { id: "alice-session-3", principal: "token:alice" });
    await expect(third).rejects.toBeInstanceOf(InstanceLimitError);
    await expect(third).rejects.toThrow(
      /runs one instance per session and token:alice already holds 2 of them, the most one principal may of its "maxInstances" of 8/,
    );
    expect((await counter(pool, bob1)).calls).toBe(1);
  });

  it("an instance unused for idleStopMs is stopped, its process ended and its slot freed; the owner's next call starts a fresh one", async () => {
    const { spec, marker } = counting("principal", { idleStopMs: 200, maxInstances: 1 });
    pool = new ServerPool([spec]);
    await pool.start();
    const first = await counter(pool, alice1);
    await until(() => processesWith(marker).every((p) => p.pid !== first.pid));
    expect(pool.status()[0]?.instances).toBe(0);
    // The slot is free: bob may have it now.
    expect((await counter(pool, bob1)).calls).toBe(1);
  });

  it("a call that names no session is refused rather than served on someone's instance", async () => {
    const { spec } = counting("session");
    pool = new ServerPool([spec]);
    await pool.start();
    await expect(pool.callTool("state", "counter", {})).rejects.toThrow(/names no session/);
  });

  it("forgetting a principal ends its own instances (per principal and per session), deletes their folder for it and its own logins, and no one else's", async () => {
    const home = await mkdtemp(join(tmpdir(), "codemux-forget-logins-"));
    try {
      const auth = await authDirectory({ CODEMUX_HOME: home });
      for (const principal of ["token:alice", "token:bob"]) {
        await mkdir(principalAuthDirectory(auth, principal), { recursive: true });
        await writeFile(join(principalAuthDirectory(auth, principal), "gh.json"), "{}");
      }
      // Each principal's instance gets a folder of its own, as the built-in default's memory server does for its graph.
      const perPrincipal = counting("principal", { ownFolder: { env: "OWN_FOLDER", under: join(home, "graphs") } });
      const perSession = counting("session");
      pool = new ServerPool([perPrincipal.spec, { ...perSession.spec, name: "own" }], { env: { ...process.env, CODEMUX_HOME: home } });
      await pool.start();
      for (const session of [alice1, alice2, bob1]) {
        await counter(pool, session);
        await pool.callTool("own", "counter", {}, { session });
      }
      expect(pool.status().map((s) => s.instances)).toEqual([2, 3]);
      expect(await readdir(join(home, "graphs", "principals"))).toHaveLength(2);
      expect(await pool.forgetPrincipal("token:alice")).toEqual({ logins: 1, serverFolders: 1 });
      expect(pool.status().map((s) => s.instances)).toEqual([1, 1]);
      await until(() => processesWith(perPrincipal.marker).length === 2 && processesWith(perSession.marker).length === 2);
      const bobs = basename(principalAuthDirectory(auth, "token:bob"));
      expect(await readdir(join(auth, "principals"))).toEqual([bobs]);
      expect(await readdir(join(home, "graphs", "principals"))).toEqual([bobs]);
      expect(await pool.forgetPrincipal("token:alice")).toEqual({ logins: 0, serverFolders: 0 });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("close() ends every instance's process as well as the listing connection's", async () => {
    const { spec, marker } = counting("session");
    pool = new ServerPool([spec]);
    await pool.start();
    await Promise.all([counter(pool, alice1), counter(pool, alice2), counter(pool, bob1)]);
    expect(processesWith(marker)).toHaveLength(4);
    await pool.close();
    pool = undefined;
    await until(() => processesWith(marker).length === 0);
  });

  it("a reload that changes the entry ends the old instances", async () => {
    const { spec, marker } = counting("principal");
    pool = new ServerPool([spec]);
    await pool.start();
    const old = await counter(pool, alice1);
    await pool.update([{ ...spec, callTimeoutMs: 20_000 }]);
    await until(() => processesWith(marker).every((p) => p.pid !== old.pid));
    expect((await counter(pool, alice1)).calls).toBe(1);
  });

  it("each instance's requests reach the relay with its owner", async () => {
    const owners: Array<InstanceOwner | undefined> = [];
    const relay: ServerRequestRelay = {
      capabilities: { roots: {} },
      handle: async (_server, _request, { owner }) => {
        owners.push(owner);
        return { roots: [{ uri: `file:///${owner?.session ?? owner?.principal ?? "config"}` }] };
      },
    };
    const spec: ServerSpec = {
      name: "ask",
      transport: { type: "stdio", command: process.execPath, args: [askingServerPath], env: {} },
      callTimeoutMs: 10_000,
      connectTimeoutMs: 10_000,
      tools: {},
      isolation: "session",
    };
    pool = new ServerPool([spec], { relay });
    await pool.start();
    const rootsOf = async (session: { id: string; principal: string }) => textOf(await pool!.callTool("ask", "roots", {}, { session }));
    expect(JSON.parse(await rootsOf(alice1))).toEqual({ roots: [{ uri: "file:///alice-session-1" }] });
    expect(JSON.parse(await rootsOf(bob1))).toEqual({ roots: [{ uri: "file:///bob-session-1" }] });
    expect(owners).toEqual([
      { principal: "token:alice", session: "alice-session-1" },
      { principal: "token:bob", session: "bob-session-1" },
    ]);
  });
});
