import type { SessionInfo } from "@codemux/core";
import { describe, expect, it } from "vitest";
import { Codemux, CoreLink, REST_HINTS, callRequest, policiesOf } from "../src/index";
import { config, connect, misbehaving } from "./helpers";

describe("the core's ports", () => {
  it("administration restarts one server (a new process), and the pipeline holds the middleware it was composed with", async () => {
    const seen: string[] = [];
    const h = await connect({
      config: config({ m: misbehaving() }),
      middleware: [
        async (ctx, next) => {
          seen.push(ctx.entry.name);
          return next(ctx);
        },
      ],
    });
    try {
      const pid = () => h.text("call_tool", { name: "m__counter", args: {} }).then((text) => (JSON.parse(text) as { pid: number }).pid);
      const first = await pid();
      await h.core.admin.restart?.("m");
      expect(await pid()).not.toBe(first);
      expect(h.core.queries.status()[0]).toMatchObject({ name: "m", restarts: 1 });
      expect(seen).toEqual(["counter", "counter"]);
    } finally {
      await h.close();
    }
  }, 30_000);
});

describe("the ports front ends read", () => {
  const policies = policiesOf(
    {
      policies: {
        rules: [
          { name: "ops", principals: ["token:ops"], tools: ["m__echo"], concurrentJobs: 2 },
          { name: "all", principals: ["token:root"], tools: ["m"] },
        ],
      },
    },
    "codemux.json",
  );
  const ops: SessionInfo = { id: "ops-1", principal: "token:ops" };
  const stranger: SessionInfo = { id: "x-1", principal: "token:x" };

  it("answer what the core holds as each session sees it: tools, grants, servers, resolving, calling, modules", async () => {
    const core = new Codemux({ config: config({ m: misbehaving() }), ...(policies ? { policies } : {}) });
    core.start();
    try {
      await core.ready();
      expect(core.queries.tools().get("m__counter")).toBeDefined();
      expect(core.queries.tools(ops).get("m__counter")).toBeUndefined();
      expect(core.queries.tools(ops).get("m__echo")).toBeDefined();
      expect(core.queries.grant(ops)?.concurrentJobs).toBe(2);
      expect(core.queries.knowsServer(ops, "m")).toBe(true);
      expect(core.queries.knowsServer(stranger, "m")).toBe(false);
      await expect(core.calls.resolve("m__counter", ops)).rejects.toThrow(/No tool named "m__counter"/);
      expect((await core.calls.resolve("m__counter")).qualifiedName).toBe("m__counter");
      const entry = await core.calls.resolve("m__echo", ops);
      expect(core.calls.moduleSource(entry.moduleSpecifier, ops)).toMatch(/export (async )?function echo/);
      const result = await core.calls.call(callRequest({ name: "m__echo", args: { text: "hi" } }, { session: ops, origin: "cli" }));
      expect(JSON.stringify(result)).toContain("hi");
      expect(core.queries.generatedModules.get("mcp/servers/m")).toMatch(/counter/);
      expect(core.calls.servicesFor(REST_HINTS).hints).toBe(REST_HINTS);
    } finally {
      await core.close();
    }
  }, 30_000);

  it("tell a listener of tool changes until it stops listening", async () => {
    const core = new Codemux({ config: config({ m: misbehaving() }) });
    core.start();
    try {
      await core.ready();
      let heard = 0;
      const stop = core.queries.onToolsChanged(() => heard++);
      await core.admin.reload(config({ m: misbehaving(), n: misbehaving() }));
      expect(heard).toBe(1);
      stop();
      await core.admin.reload(config({ m: misbehaving() }));
      expect(heard).toBe(1);
    } finally {
      await core.close();
    }
  }, 30_000);
});

describe("CoreLink", () => {
  it("lets parts made before the core keep results in its store and read its policies, once the core is composed", async () => {
    const link = new CoreLink();
    const owner: SessionInfo = { id: "s-1", principal: "token:ops" };
    expect(() => link.grant(owner)).toThrow(/not composed yet/);
    const policies = policiesOf({ policies: { rules: [{ name: "ops", principals: ["token:ops"], tools: ["m"], concurrentJobs: 3 }] } }, "codemux.json");
    const core = new Codemux({ config: config({}), link, ...(policies ? { policies } : {}) });
    try {
      expect(link.grant(owner)?.concurrentJobs).toBe(3);
      const kept = await link.keep("m__echo", "x".repeat(100), owner);
      const read = await core.surface("code").callTool("read_result", { handle: kept.handle, op: "stat" }, { session: owner, origin: "cli" });
      expect(JSON.stringify(read)).toContain("100");
      expect(() => new Codemux({ config: config({}), link })).toThrow(/already bound/);
    } finally {
      await core.close();
    }
  });
});
