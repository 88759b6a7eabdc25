import { describe, expect, it } from "vitest";
import { Catalog } from "./catalog";
import { UnknownToolError } from "./errors";
import type { ToolDefinition } from "@codemux/core";

const tool = (name: string, description = "", properties: Record<string, object> = {}): ToolDefinition => ({
  name,
  description,
  inputSchema: { type: "object", properties },
});

describe("Catalog", () => {
  it("keeps tools only an app may call out of every list, search and name, and finds them by appTool", () => {
    const catalog = new Catalog();
    const appOnly = { ...tool("refresh_chart", "Refresh the sales chart."), _meta: { ui: { resourceUri: "ui://charts/sales.html", visibility: ["app"] } } };
    const shown = { ...tool("show_sales", "Show the sales chart."), _meta: { ui: { resourceUri: "ui://charts/sales.html", visibility: ["model", "app"] } } };
    catalog.setServerTools("charts", [appOnly, shown]);
    expect(catalog.entries().map((e) => e.qualifiedName)).toEqual(["charts__show_sales"]);
    expect(catalog.get("charts__refresh_chart")).toBeUndefined();
    expect(() => catalog.resolve("charts__refresh_chart")).toThrow(UnknownToolError);
    expect(catalog.search("refresh sales chart").map((h) => h.entry.qualifiedName)).toEqual(["charts__show_sales"]);
    expect(catalog.appTool("charts__refresh_chart")?.tool._meta).toEqual(appOnly._meta);
    expect(catalog.appTools("charts").map((e) => e.qualifiedName)).toEqual(["charts__refresh_chart"]);
    catalog.removeServer("charts");
    expect(catalog.appTool("charts__refresh_chart")).toBeUndefined();
  });

  it("names, signs and summarises every tool, per server", () => {
    const catalog = new Catalog();
    catalog.setServerTools("fs", [tool("read_text_file", "Read a file as text. Long details.", { path: { type: "string" } }), tool("delete", "Delete it.")]);
    catalog.setServerTools("github", [tool("read_text_file", "Same name, other server.")]);
    expect(catalog.size).toBe(3);
    expect(catalog.servers()).toEqual(["fs", "github"]);
    expect(catalog.get("fs__read_text_file")).toMatchObject({
      server: "fs",
      name: "read_text_file",
      functionName: "readTextFile",
      moduleSpecifier: "mcp/servers/fs/readTextFile",
      signature: "readTextFile({ path?: string })",
      summary: "Read a file as text.",
    });
    expect(catalog.get("fs__delete")!.functionName).toBe("delete_");
    expect(catalog.get("github__read_text_file")!.server).toBe("github");
  });

  it("replaces and removes a server's tools incrementally and says so", () => {
    const catalog = new Catalog();
    const changes: string[] = [];
    catalog.on("changed", (s) => changes.push(s));
    catalog.setServerTools("a", [tool("one"), tool("two")]);
    catalog.setServerTools("b", [tool("three")]);
    catalog.setServerTools("a", [tool("two")]);
    expect(catalog.entries().map((e) => e.qualifiedName)).toEqual(["a__two", "b__three"]);
    expect(catalog.search("one")).toEqual([]);
    catalog.removeServer("b");
    expect(catalog.entries("b")).toEqual([]);
    expect(changes).toEqual(["a", "b", "a", "b"]);
  });

  it("resolves names and suggests close ones for a wrong name", () => {
    const catalog = new Catalog();
    catalog.setServerTools("fs", [tool("read_text_file", "Read a text file"), tool("write_file", "Write a file")]);
    expect(catalog.resolve("fs__readTextFile").name).toBe("read_text_file");
    expect(() => catalog.resolve("fs__read_txt_file")).toThrow(UnknownToolError);
    expect(() => catalog.resolve("fs__read_txt_file")).toThrow(/Did you mean "fs__read_text_file"/);
  });

  it("searches, optionally within one server", () => {
    const catalog = new Catalog();
    catalog.setServerTools("fs", [tool("read_text_file", "Read a text file")]);
    catalog.setServerTools("web", [tool("fetch_page", "Read a web page")]);
    expect(
      catalog
        .search("read", { limit: 5 })
        .map((h) => h.entry.qualifiedName)
        .sort(),
    ).toEqual(["fs__read_text_file", "web__fetch_page"]);
    expect(catalog.search("read", { server: "web" }).map((h) => h.entry.qualifiedName)).toEqual(["web__fetch_page"]);
    expect(catalog.search("web__fetch_page", { limit: 1 }).map((h) => h.entry.qualifiedName)).toEqual(["web__fetch_page"]);
  });

  it("shows an owned document only to searches by its owner, never to a search that names no owner", () => {
    const catalog = new Catalog();
    const skill = (owner: string | undefined, name: string) =>
      catalog.setDocument({
        id: `${owner ?? "project"}/${name}`,
        kind: "skill",
        ...(owner !== undefined ? { owner } : {}),
        qualifiedName: `skill:${name}`,
        server: "skills",
        name,
        functionName: name,
        moduleSpecifier: `mcp/skills/${name}`,
        signature: `${name}()`,
        summary: "",
        tool: { name, description: "rotate the payroll ledger", inputSchema: { type: "object" } },
      });
    skill("alice", "aliceLedger");
    skill("bob", "bobLedger");
    skill(undefined, "teamLedger");
    const found = (owner?: string) =>
      catalog
        .search("payroll ledger", { limit: 10, ...(owner !== undefined ? { owner } : {}) })
        .map((h) => h.entry.name)
        .sort();
    expect(found("alice")).toEqual(["aliceLedger", "teamLedger"]);
    expect(found("bob")).toEqual(["bobLedger", "teamLedger"]);
    expect(found()).toEqual(["teamLedger"]);
  });

  it("searches the values of enum parameters, of arrays' items too", () => {
    const catalog = new Catalog();
    catalog.setServerTools("browser", [
      tool("emulate", "Emulate features of the page", { scheme: { type: "string", enum: ["light", "dark", 3] } }),
      tool("resize", "Resize the page", { width: { type: "number" } }),
      tool("audit", "Audit the page", { categories: { type: "array", items: { enum: ["accessibility", "seo"] } } }),
    ]);
    expect(catalog.search("dark", { limit: 1 }).map((h) => h.entry.qualifiedName)).toEqual(["browser__emulate"]);
    expect(catalog.search("seo", { limit: 1 }).map((h) => h.entry.qualifiedName)).toEqual(["browser__audit"]);
  });

  it("with a visibility, hides tools from search (even by exact name), resolution and suggestions, as if they did not exist", () => {
    const catalog = new Catalog();
    catalog.setServerTools("fs", [tool("read_text_file", "Read a file as text."), tool("write_file", "Write a file.")]);
    const visible = (name: string) => name !== "fs__write_file";
    const shown = (document: { id: string }) => visible(document.id);
    expect(catalog.search("write a file", { visible: shown }).map((h) => h.entry.qualifiedName)).not.toContain("fs__write_file");
    expect(catalog.search("fs__write_file", { visible: shown }).map((h) => h.entry.qualifiedName)).not.toContain("fs__write_file");
    expect(catalog.search("fs__write_file").map((h) => h.entry.qualifiedName)[0]).toBe("fs__write_file");
    expect(catalog.resolve("fs__read_text_file", visible).qualifiedName).toBe("fs__read_text_file");
    for (const name of ["fs__write_file", "fs__write_fil", "fs__write"]) {
      const error = (() => {
        try {
          catalog.resolve(name, visible);
        } catch (thrown) {
          return thrown as UnknownToolError;
        }
        throw new Error(`${name} resolved`);
      })();
      expect(UnknownToolError.isInstance(error)).toBe(true);
      expect(error.suggestions).not.toContain("fs__write_file");
    }
  });
});
