import { Server } from "@modelcontextprotocol/server";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SDK_INTERNALS, routeLogMessages } from "./sdk-internals";

describe("the server's reach-ins to SDK internals", () => {
  it("are all still where the pinned SDK keeps them", () => {
    const server = new Server({ name: "probe", version: "1" }, { capabilities: { logging: {} } });
    for (const name of Object.keys(SDK_INTERNALS)) expect(typeof (server as unknown as Record<string, unknown>)[name], name).toBe("function");
  });

  it("routeLogMessages takes the server's log lines, its own sendLoggingMessage included, and leaves other notifications to the SDK", async () => {
    const server = new Server({ name: "probe", version: "1" }, { capabilities: { logging: {} } });
    const routed: unknown[] = [];
    routeLogMessages(server, async (params) => void routed.push(params));
    await server.notification({ method: "notifications/message", params: { level: "info", data: "relayed" } });
    await server.sendLoggingMessage({ level: "warning", data: "own" });
    expect(routed).toEqual([
      { level: "info", data: "relayed" },
      { level: "warning", data: "own" },
    ]);
    // Not connected: the SDK's own notification refuses it, so it did go there.
    await expect(server.notification({ method: "notifications/tools/list_changed" })).rejects.toThrow();
  });

  it("are each named in the README's SDK seams", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const seams = readme.slice(readme.indexOf("## SDK seams"), readme.indexOf("\n## ", readme.indexOf("## SDK seams") + 1));
    expect(seams).toContain("src/sdk-internals.ts");
    for (const name of Object.keys(SDK_INTERNALS)) expect(seams, name).toContain(`\`${name}\``);
  });
});
