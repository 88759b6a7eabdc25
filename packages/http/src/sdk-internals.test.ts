import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hasSdkStreams, SDK_INTERNALS } from "./sdk-internals";

describe("the http package's reach-ins to SDK internals", () => {
  it("are all still where the pinned SDK keeps them", () => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => "s" });
    for (const name of Object.keys(SDK_INTERNALS)) expect((transport as unknown as Record<string, unknown>)[name], name).toBeDefined();
    expect(hasSdkStreams(transport)).toBe(true);
  });

  it("are each named in the README's SDK seams", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const seams = readme.slice(readme.indexOf("## SDK seams"), readme.indexOf("\n## ", readme.indexOf("## SDK seams") + 1));
    expect(seams).toContain("src/sdk-internals.ts");
    for (const name of Object.keys(SDK_INTERNALS)) expect(seams, name).toContain(`\`${name}\``);
  });
});
