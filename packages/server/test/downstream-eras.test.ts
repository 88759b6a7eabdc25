import { misbehavingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_CACHE_VERSION } from "../src/catalog-cache";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, textOf } from "./helpers";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-downstream-eras-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The `PID METHOD` lines a test server logged. */
async function requests(log: string): Promise<Array<{ pid: string; method: string }>> {
  const text = await readFile(log, "utf8").catch(() => "");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => ({ pid: line.split(" ")[0] ?? "", method: line.split(" ")[1] ?? "" }));
}

/**
 * Codemux over the 2026 test server with --list-changed, once the server has been asked for its listen stream (opened
 * once it is ready), and a 2025 client of codemux to set handlers on before `connect()`.
 */
async function listeningCodemux(name: string): Promise<{ core: Codemux; client: Client; connect: () => Promise<void> }> {
  const log = join(dir, `${name}.log`);
  const core = new Codemux({ config: config({ m: node(modernServerPath, "--legacy", "reject", "--list-changed", "--log", log) }), dataDir: join(dir, name) });
  core.start();
  await core.ready(10_000);
  await until(async () => (await requests(log)).some((r) => r.method === "subscriptions/listen"));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name, version: "1.0.0" });
  return { core, client, connect: () => client.connect(clientSide) };
}

describe("downstream eras through codemux", () => {
  it("are kept in the catalog cache and passed back at the next start: a server that exits on the probe is started once, not probed again", async () => {
    const log = join(dir, "rmcp.log");
    const cacheDir = join(dir, "cache");
    const servers = { r: node(misbehavingServerPath, "--before-initialize", "exit", "--log", log), m: node(modernServerPath, "--legacy", "reject") };
    const first = new Codemux({ config: config(servers), dataDir: join(dir, "first"), cacheDir });
    first.start();
    await first.ready(10_000);
    expect(first.status().map((s) => [s.name, s.protocol])).toEqual([
      ["r", "2025-11-25"],
      ["m", "2026-07-28"],
    ]);
    await first.close();
    const [file] = await readdir(cacheDir);
    const cached = JSON.parse(await readFile(join(cacheDir, file!), "utf8"));
    expect(cached.version).toBe(CATALOG_CACHE_VERSION);
    // A 2025 verdict keeps the serverInfo.version it was found with: another one at a later start is probed again.
    expect(cached.eras).toMatchObject({ r: { kind: "legacy", version: "1.0.0" }, m: { kind: "modern", discover: { supportedVersions: ["2026-07-28"] } } });
    const before = await requests(log);
    expect(new Set(before.map((r) => r.pid)).size).toBe(2);

    const second = new Codemux({ config: config(servers), dataDir: join(dir, "second"), cacheDir });
    second.start();
    await second.settled(10_000);
    try {
      expect(second.status().map((s) => [s.name, s.state, s.protocol])).toEqual([
        ["r", "ready", "2025-11-25"],
        ["m", "ready", "2026-07-28"],
      ]);
      const after = (await requests(log)).slice(before.length);
      expect(new Set(after.map((r) => r.pid)).size).toBe(1);
      expect(after.map((r) => r.method)).not.toContain("server/discover");
    } finally {
      await second.close();
    }
  });

  it("are not cached for a server whose discover answer is too big to keep (64 KiB): it is probed at the next start instead", async () => {
    const cacheDir = join(dir, "big-cache");
    const servers = { big: node(modernServerPath, "--legacy", "reject", "--instructions-chars", "100000"), m: node(modernServerPath, "--legacy", "reject") };
    const core = new Codemux({ config: config(servers), dataDir: join(dir, "big"), cacheDir });
    core.start();
    await core.ready(10_000);
    expect(core.status().map((s) => s.protocol)).toEqual(["2026-07-28", "2026-07-28"]);
    await core.close();
    const [file] = await readdir(cacheDir);
    const cached = JSON.parse(await readFile(join(cacheDir, file!), "utf8"));
    expect(Object.keys(cached.eras)).toEqual(["m"]);
  });

  it("call a 2026 server with the calling client's own capabilities, never codemux's", async () => {
    const core = new Codemux({ config: config({ m: node(modernServerPath, "--legacy", "reject") }), dataDir: join(dir, "caps") });
    core.start();
    await core.ready(10_000);
    const whoami = async (capabilities: Record<string, object>) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createSessionServer(core.sessions).connect(serverSide);
      const client = new Client({ name: "caller", version: "1.0.0" }, { capabilities });
      await client.connect(clientSide);
      const result = await client.callTool({ name: "call_tool", arguments: { name: "m__whoami", args: {} } });
      await client.close();
      return JSON.parse(textOf(result as never)).clientCapabilities;
    };
    try {
      // Roots are answered by codemux itself (from the config for a shared server), so every call declares them;
      // codemux adds the Tasks extension: it follows a 2026 server's tasks itself (downstream-tasks.test.ts).
      const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
      expect(await whoami({ elicitation: { form: {} } })).toEqual({ elicitation: { form: {} }, roots: {}, ...tasks });
      expect(await whoami({})).toEqual({ roots: {}, ...tasks });
    } finally {
      await core.close();
    }
  });

  it("pass a 2026 server's resource list change (heard on its listen stream) to a 2025 client of codemux", async () => {
    const { core, client, connect } = await listeningCodemux("listen");
    const heard = new Promise<string>((resolve) => client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => resolve(n.method)));
    await connect();
    try {
      await client.callTool({ name: "call_tool", arguments: { name: "m__add_resource", args: { uri: "test://added" } } });
      expect(await heard).toBe("notifications/resources/list_changed");
    } finally {
      await client.close();
      await core.close();
    }
  });

  it("pass a 2026 server's update of a resource a 2025 client of codemux subscribed to (the URI joins the listen stream's filter)", async () => {
    const { core, client, connect } = await listeningCodemux("updates");
    const updated = new Promise<string>((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    await connect();
    try {
      await client.callTool({ name: "call_tool", arguments: { name: "m__add_resource", args: { uri: "test://watched" } } });
      const listed = (await client.listResources()).resources.map((r) => r.uri);
      const shown = listed.find((uri) => uri.endsWith("test://watched")) ?? "";
      await client.subscribeResource({ uri: shown });
      await client.callTool({ name: "call_tool", arguments: { name: "m__update_resource", args: { uri: "test://watched" } } });
      expect(await updated).toBe(shown);
    } finally {
      await client.close();
      await core.close();
    }
  });
});
