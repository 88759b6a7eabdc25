import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../tool";
import { scanDefinitions, verdictAtLeast } from "./scan";
import type { ScanInput, ScanOtherServer, ScanRule } from "./types";

interface PoisonedItem {
  id: string;
  class: string;
  source: string;
  rule: ScanRule;
  input: ScanInput;
  before?: ScanInput;
  otherServers?: ScanOtherServer[];
}

const fixture = (path: string) => new URL(path, import.meta.url);
const corpus = (JSON.parse(readFileSync(fixture("../../test/fixtures/poisoned-definitions.json"), "utf8")) as { items: PoisonedItem[] }).items;

/** Each server of a set scanned with every other server of the set as its neighbours, as codemux would. */
function scanSet(servers: Array<{ server: string; tools: ToolDefinition[] }>) {
  return servers.map(({ server, tools }) =>
    scanDefinitions(
      { server, tools },
      { otherServers: servers.filter((other) => other.server !== server).map((other) => ({ name: other.server, tools: other.tools.map((t) => t.name) })) },
    ),
  );
}

describe("the poisoned corpus (test/fixtures/poisoned-definitions.json)", () => {
  it("holds at least 60 items in every published class, several phrasings each", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    const perClass = new Map<string, number>();
    for (const item of corpus) perClass.set(item.class, (perClass.get(item.class) ?? 0) + 1);
    expect([...perClass.values()].every((n) => n >= 4)).toBe(true);
    expect(new Set(corpus.map((item) => item.id)).size).toBe(corpus.length);
  });

  it.each(corpus.map((item) => [item.id, item] as const))("%s is caught at warn or above by the rule it names", (_id, item) => {
    const report = scanDefinitions(item.input, { otherServers: item.otherServers ?? [] });
    expect(report.verdict).not.toBe("clean");
    expect(verdictAtLeast(report.verdict, "warn")).toBe(true);
    expect(report.findings.filter((f) => f.rule === item.rule && verdictAtLeast(f.severity, "warn")).length).toBeGreaterThan(0);
    // The rug pull's approved definition was clean: the change is what the scan catches.
    if (item.before) expect(verdictAtLeast(scanDefinitions(item.before, { otherServers: item.otherServers ?? [] }).verdict, "warn")).toBe(false);
  });
});

describe("the real catalogs raise nothing above info", () => {
  it("22 servers, 332 tools (packages/codegen/test/fixtures/real-catalogs)", () => {
    const dir = fixture("../../../codegen/test/fixtures/real-catalogs/");
    const servers = readdirSync(dir)
      .filter((file) => file.endsWith(".json"))
      .map((file) => ({ server: file.slice(0, -".json".length), tools: JSON.parse(readFileSync(new URL(file, dir), "utf8")) as ToolDefinition[] }));
    expect([servers.length, servers.reduce((n, s) => n + s.tools.length, 0)]).toEqual([22, 332]);
    const above = scanSet(servers).flatMap((report) =>
      report.findings.filter((f) => verdictAtLeast(f.severity, "warn")).map((f) => `${report.server} ${f.path}: ${f.message}`),
    );
    expect(above).toEqual([]);
  });

  it("mcpproxy-go's tool set: 45 tools of 7 servers (test/fixtures/mcpproxy-corpus-v2.tools.json)", () => {
    const { tools } = JSON.parse(readFileSync(fixture("../../test/fixtures/mcpproxy-corpus-v2.tools.json"), "utf8")) as {
      tools: Array<{ server: string; tool: string; description: string; schema: ToolDefinition["inputSchema"] }>;
    };
    const servers = [...new Set(tools.map((t) => t.server))].map((server) => ({
      server,
      tools: tools.filter((t) => t.server === server).map((t) => ({ name: t.tool, description: t.description, inputSchema: t.schema })),
    }));
    expect([servers.length, tools.length]).toEqual([7, 45]);
    const above = scanSet(servers).flatMap((report) =>
      report.findings.filter((f) => verdictAtLeast(f.severity, "warn")).map((f) => `${report.server} ${f.path}: ${f.message}`),
    );
    expect(above).toEqual([]);
  });
});
