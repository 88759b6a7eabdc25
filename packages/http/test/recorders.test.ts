import type { ToolCallMiddleware } from "@codemux/core";
import { Codemux } from "@codemux/server";
import { describe, expect, it } from "vitest";
import { CodemuxHttpServer, httpCallRecorders } from "../src/index";
import { TOKENS, bearer, config, misbehaving, serve } from "./helpers";

const echo = (url: string) =>
  fetch(`${url}/v1/tools/m__echo/call`, {
    method: "POST",
    headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
    body: JSON.stringify({ text: "hi" }),
  });

describe("the HTTP server's call recorders", () => {
  it("are composed into the core's pipeline: the server adds nothing to it, and each call is counted and shown once", async () => {
    const s = await serve();
    try {
      expect((await echo(s.url)).status).toBe(200);
      expect(s.http.metrics.render()).toMatch(/^codemux_tool_calls_total\{origin="rest",server="m"\} 1$/m);
    } finally {
      await s.close();
    }
  }, 30_000);

  it("are not added by the server to a core composed without them: it leaves the core's pipeline as composed", async () => {
    const core = new Codemux({ config: config({ m: misbehaving() }) });
    core.start();
    await core.ready();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined });
    try {
      await http.listen();
      expect((await echo(http.url)).status).toBe(200);
      expect(http.metrics.render()).not.toMatch(/^codemux_tool_calls_total\{/m);
    } finally {
      await http.close();
      await core.close();
    }
  }, 30_000);

  it("count a library user's calls when composed into the core as the README shows, with middleware of its own beside them", async () => {
    const recorders = httpCallRecorders();
    const seen = recorders.metrics.counter("test_calls_total", "Calls the test's own middleware saw.");
    const own: ToolCallMiddleware = (ctx, next) => {
      seen.inc({ server: ctx.entry.server });
      return next(ctx);
    };
    const core = new Codemux({ config: config({ m: misbehaving() }), middleware: [own, ...recorders.middleware] });
    core.start();
    await core.ready();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined, recorders });
    try {
      await http.listen();
      expect((await echo(http.url)).status).toBe(200);
      const metrics = http.metrics.render();
      expect(metrics).toMatch(/^codemux_tool_calls_total\{origin="rest",server="m"\} 1$/m);
      expect(metrics).toMatch(/^test_calls_total\{server="m"\} 1$/m);
    } finally {
      await http.close();
      await core.close();
    }
  }, 30_000);
});
