import { misbehavingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SUBSCRIPTIONS_PER_SESSION } from "../src/defaults";
import { Codemux, createSessionServer } from "../src/index";
import { config, node } from "./helpers";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-unsubscribe-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The lines a test server logged (`PID METHOD [DETAIL]`), without the pid. */
async function logged(log: string): Promise<string[]> {
  return (await readFile(log, "utf8").catch(() => "")).split("\n").flatMap((line) => (line ? [line.slice(line.indexOf(" ") + 1)] : []));
}
const count = async (log: string, method: string) => (await logged(log)).filter((line) => line === method).length;
/** The resources the newest listen stream's filter named. */
const lastFilter = async (log: string) => JSON.parse(((await logged(log)).findLast((line) => line.startsWith("listen-resources ")) ?? "x []").slice(17));

/** Codemux over one server `m`, and a way to open client sessions of it (each its own session). */
async function codemuxOver(name: string, server: { command: string; args: string[] }) {
  const core = new Codemux({ config: config({ m: server }), dataDir: join(dir, name) });
  core.start();
  await core.ready(10_000);
  const clients: Client[] = [];
  const open = async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions).connect(serverSide);
    const client = new Client({ name: `${name}-${clients.length}`, version: "1.0.0" });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const close = async () => {
    await Promise.all(clients.map((c) => c.close()));
    await core.close();
  };
  return { core, open, close };
}

describe("a client's resources/unsubscribe, passed downstream once no client holds the resource", () => {
  it("to a 2025 server: resources/unsubscribe goes down with the last holder's unsubscribe or end, not before", async () => {
    const log = join(dir, "legacy.log");
    const { open, close } = await codemuxOver("legacy", node(misbehavingServerPath, "--resources", "--log", log));
    try {
      const [a, b, c] = [await open(), await open(), await open()];
      const shown = (await a.listResources()).resources.find((r) => r.uri.endsWith("test://note"))?.uri as string;
      await a.subscribeResource({ uri: shown });
      await b.subscribeResource({ uri: shown });
      await a.unsubscribeResource({ uri: shown });
      expect(await count(log, "resources/unsubscribe")).toBe(0);
      // b's subscription is kept: it still hears the resource's updates.
      const heard = new Promise<string>((resolve) => b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
      await b.callTool({ name: "call_tool", arguments: { name: "m__change_lists", args: {} } });
      expect(await heard).toBe(shown);
      await b.unsubscribeResource({ uri: shown });
      expect(await count(log, "resources/unsubscribe")).toBe(1);

      // A session that ends lets go of what it held, as an unsubscribe does.
      await c.subscribeResource({ uri: shown });
      expect(await count(log, "resources/subscribe")).toBe(3);
      await c.close();
      await until(async () => (await count(log, "resources/unsubscribe")) === 2);
    } finally {
      await close();
    }
  });

  it("to a 2026 server: the URI leaves the listen stream's filter with the last holder's unsubscribe, not before", async () => {
    const log = join(dir, "modern.log");
    const { open, close } = await codemuxOver("modern", node(modernServerPath, "--legacy", "reject", "--list-changed", "--log", log));
    try {
      await until(async () => (await count(log, "subscriptions/listen")) === 1);
      const [a, b] = [await open(), await open()];
      await a.callTool({ name: "call_tool", arguments: { name: "m__add_resource", args: { uri: "test://watched" } } });
      const shown = (await a.listResources()).resources.find((r) => r.uri.endsWith("test://watched"))?.uri as string;
      await a.subscribeResource({ uri: shown });
      await b.subscribeResource({ uri: shown });
      expect(await lastFilter(log)).toEqual(["test://watched"]);
      const listens = await count(log, "subscriptions/listen");
      await a.unsubscribeResource({ uri: shown });
      expect(await count(log, "subscriptions/listen")).toBe(listens);
      await b.unsubscribeResource({ uri: shown });
      expect(await count(log, "subscriptions/listen")).toBe(listens + 1);
      expect(await lastFilter(log)).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe("a session's resource subscriptions, bounded", () => {
  it("refuses one past the bound with a sentence, and an unsubscribe frees a place", async () => {
    const { open, close } = await codemuxOver("bounded", node(misbehavingServerPath, "--resources"));
    try {
      const client = await open();
      // The collision scheme names any URI of a server: a client could subscribe to URIs without end.
      const uri = (i: number) => `codemux://m/test://many/${i}`;
      await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS_PER_SESSION }, (_, i) => client.subscribeResource({ uri: uri(i) })));
      await expect(client.subscribeResource({ uri: uri(MAX_SUBSCRIPTIONS_PER_SESSION) })).rejects.toThrow(
        `This session already holds ${MAX_SUBSCRIPTIONS_PER_SESSION} resource subscriptions, the most it may; unsubscribe from some first.`,
      );
      // Subscribing again to one it holds is no new subscription.
      await client.subscribeResource({ uri: uri(0) });
      await client.unsubscribeResource({ uri: uri(0) });
      await client.subscribeResource({ uri: uri(MAX_SUBSCRIPTIONS_PER_SESSION) });
    } finally {
      await close();
    }
  });
});
