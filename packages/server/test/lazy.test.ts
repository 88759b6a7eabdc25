import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogCache } from "../src/catalog-cache";
import { MemoryStore } from "../src/index";
import { config, connect, misbehaving, textOf, type Harness } from "./helpers";

const SERVERS = 22;
const tag = randomUUID();
const cfg = config(Object.fromEntries(Array.from({ length: SERVERS }, (_, i) => [`s${i}`, { ...misbehaving(`--tag=${tag}-${i}`), lazy: true }])));
let h: Harness;

/** Which of this test's servers have a process, seen from outside (the process table). */
async function running(): Promise<number[]> {
  const { stdout } = await promisify(execFile)("ps", ["-eo", "args"]);
  return [...stdout.matchAll(new RegExp(`--tag=${tag}-(\\d+)`, "g"))].map((m) => Number(m[1])).sort((a, b) => a - b);
}

async function until(done: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (await done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

beforeAll(async () => {
  // A warm cache: the tool lists of a previous run.
  const cacheStore = new MemoryStore();
  const tools = [
    {
      name: "echo",
      description: "Return the text it is given.",
      inputSchema: { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] },
    },
    { name: "counter", description: "Count calls since this process started; also returns the pid.", inputSchema: { type: "object" as const } },
  ];
  await new CatalogCache(cacheStore, cfg).save(new Map(cfg.servers.map((s) => [s.name, tools])), Date.now());
  h = await connect({ config: cfg, cacheStore, poolOptions: { backoff: { initialMs: 50, maxMs: 200 }, idleStopMs: 1_000 } });
  await h.core.ready();
});
afterAll(async () => {
  await h?.close();
});

describe("lazy servers", () => {
  it("start none of 22 servers for a search, and only the one a call needs", async () => {
    expect(h.core.status().every((s) => s.state === "idle")).toBe(true);
    expect(await h.text("search_tools", { query: "count calls", server: "s7", limit: 1 })).toContain("s7__counter");
    expect(await running()).toEqual([]);

    const answer = JSON.parse(await h.text("call_tool", { name: "s7__counter" })) as { calls: number; pid: number };
    expect(answer.calls).toBe(1);
    expect(await running()).toEqual([7]);
    expect(
      h.core
        .status()
        .filter((s) => s.state !== "idle")
        .map((s) => s.name),
    ).toEqual(["s7"]);
  });

  it("stop a lazy server unused for idleStopMs, keep its tools, and start it again on the next call", async () => {
    expect(await until(async () => (await running()).length === 0)).toBe(true);
    expect(h.core.status().find((s) => s.name === "s7")?.state).toBe("idle");
    expect(h.core.catalog.get("s7__counter")).toBeDefined();
    const again = JSON.parse(await h.text("call_tool", { name: "s7__counter" })) as { calls: number };
    // A new process: its count starts over.
    expect(again.calls).toBe(1);
    expect(textOf(await h.call("call_tool", { name: "s3__echo", args: { text: "hi" } }))).toBe("hi");
  });
});
