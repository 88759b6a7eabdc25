import { paramHeaderServerPath } from "@codemux/test-servers";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ServerPool } from "../src/index";
import { cleanedAfterEach, httpSpec, logFile, startModernHttp, textOf } from "./helpers";

const made = cleanedAfterEach();

async function startPool(url: string): Promise<ServerPool> {
  const pool = new ServerPool([httpSpec("p", url)], { retryDelaysMs: [] });
  made.pools.push(pool);
  await pool.start();
  return pool;
}

describe("Mcp-Param headers (SEP-2243) to a 2026-07-28 server over HTTP", () => {
  it("mirrors each x-mcp-header argument into its header, encoded as the spec says, so an SDK v2 McpServer takes the call", async () => {
    const log = logFile(made.dirs);
    const pool = await startPool(await startModernHttp(made.children, ["--log", log], paramHeaderServerPath));
    expect(pool.status()[0]).toMatchObject({ state: "ready", protocol: "2026-07-28" });

    expect(textOf(await pool.callTool("p", "route", { region: "us-west1", priority: 42, verbose: true, query: "q" }))).toBe(
      "routed q to us-west1 at 42 verbosely",
    );
    // Not plain ASCII: base64 in the header; an absent value sends no header.
    expect(textOf(await pool.callTool("p", "route", { region: "Hello, 世界", query: "q" }))).toBe("routed q to Hello, 世界");

    const sent = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(sent).toEqual([
      { "mcp-param-region": "us-west1", "mcp-param-priority": "42", "mcp-param-verbose": "true" },
      { "mcp-param-region": `=?base64?${Buffer.from("Hello, 世界").toString("base64")}?=` },
    ]);
  });

  it("reads the list again on HeaderMismatch (-32020) and sends the call once more with the tool's headers of now", async () => {
    const pool = await startPool(await startModernHttp(made.children, ["--marked-later"], paramHeaderServerPath));
    expect(textOf(await pool.callTool("p", "route", { region: "eu", query: "q" }))).toBe("routed q to eu");
    await pool.callTool("p", "mark_route", {});
    // Listed without x-mcp-header, now marked: the server refuses the first send, the second carries the header.
    expect(textOf(await pool.callTool("p", "route", { region: "eu", query: "q" }))).toBe("routed q to eu");
    expect(JSON.stringify(pool.status()[0])).not.toContain("error");
  });
});
