import { Client } from "@modelcontextprotocol/client";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SDK_INTERNALS } from "./sdk-internals";

describe("the pool's reach-ins to SDK internals", () => {
  it("are all still where the pinned SDK keeps them", () => {
    const client = new Client({ name: "probe", version: "1" });
    for (const name of Object.keys(SDK_INTERNALS)) expect(typeof (client as unknown as Record<string, unknown>)[name], name).toBe("function");
    // What the call lane uses of the codec.
    const codec = (client as unknown as { _wireCodec(): Record<string, unknown> })._wireCodec();
    for (const method of ["decodeResult", "validateResult", "validateNotification"]) expect(typeof codec[method], method).toBe("function");
  });

  it("are each named in the README's SDK seams", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const seams = readme.slice(readme.indexOf("## SDK seams"), readme.indexOf("\n## ", readme.indexOf("## SDK seams") + 1));
    expect(seams).toContain("src/sdk-internals.ts");
    for (const name of Object.keys(SDK_INTERNALS)) expect(seams, name).toContain(`\`${name}\``);
  });
});
