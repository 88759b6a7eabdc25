import { Server as ServerV1 } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Server } from "@modelcontextprotocol/server";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SDK_INTERNALS, sdkInternals } from "./sdk-internals";

// Each line's server, and how it sets a tools/call handler (1.x by the request's schema, 2.x by its method).
const servers = {
  "@modelcontextprotocol/sdk 1.x": () => {
    const server = new ServerV1({ name: "probe-v1", version: "1" }, { capabilities: { tools: {} } });
    return { server, setCallHandler: () => server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] })) };
  },
  "@modelcontextprotocol/server 2.x": () => {
    const server = new Server({ name: "probe-v2", version: "1" }, { capabilities: { tools: {} } });
    return { server, setCallHandler: () => server.setRequestHandler("tools/call", () => ({ content: [] })) };
  },
};

describe("hooks' reach-ins to SDK internals", () => {
  for (const [sdk, make] of Object.entries(servers)) {
    it(`are all still where the pinned ${sdk} keeps them: the handler map holds what setRequestHandler set, and the name`, () => {
      const { server, setCallHandler } = make();
      for (const name of Object.keys(SDK_INTERNALS)) expect(server, `${sdk} ${name}`).toHaveProperty(name);
      const { handlers, serverName } = sdkInternals<unknown>(server);
      expect(serverName).toBe(sdk.includes("1.x") ? "probe-v1" : "probe-v2");
      const before = handlers.get("tools/call");
      setCallHandler();
      expect(handlers.get("tools/call")).toBeTypeOf("function");
      expect(handlers.get("tools/call")).not.toBe(before);
    });
  }

  it("are each named in the README's SDK seams", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const seams = readme.slice(readme.indexOf("## SDK seams"), readme.indexOf("\n## ", readme.indexOf("## SDK seams") + 1));
    expect(seams).toContain("src/sdk-internals.ts");
    for (const name of Object.keys(SDK_INTERNALS)) expect(seams, name).toContain(`\`${name}\``);
  });
});
