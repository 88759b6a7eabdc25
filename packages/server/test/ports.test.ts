import { describe, expect, it } from "vitest";
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
