import { replayServerPath } from "@codemux/test-servers";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { connectCodemux, connectCommand, textOf } from "./client";
import { sampleArguments } from "./sample-arguments";

export interface TokensReport {
  servers: number;
  tools: number;
  /** Every tool listed to the model directly: sum over the servers of their tools/list. */
  directTokens: number;
  /** codemux's upfront tools/list in code mode. */
  codemuxTokens: number;
  reduction: number;
  /** Tokens of a typical search_tools answer (limit 5, detail summary). */
  searchResponseTokens: { median: number; max: number };
  /** Tools found first by searching for their exact server__tool name, and called through call_tool. */
  reachedBySearch: number;
  reachedByCall: number;
  unreached: string[];
}

const count = (value: unknown) => encode(JSON.stringify(value)).length;

/** Replays the real catalogs behind codemux (over stdio, as a client runs it) and counts tokens with o200k. */
export async function runTokens(benchDir: string): Promise<TokensReport> {
  const catalogDir = join(benchDir, "real-catalogs");
  const files = (await readdir(catalogDir)).filter((f) => f.endsWith(".json")).sort();
  const servers = Object.fromEntries(files.map((f) => [basename(f, ".json"), { command: process.execPath, args: [replayServerPath, join(catalogDir, f)] }]));

  let directTokens = 0;
  const catalogs = new Map<string, Tool[]>();
  for (const [name, spec] of Object.entries(servers)) {
    const direct = await connectCommand(spec.command, spec.args);
    const { tools } = await direct.listTools();
    directTokens += count(tools);
    catalogs.set(name, tools);
    await direct.close();
  }

  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-"));
  const configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: servers }));
  const client = await connectCodemux(["--config", configFile]);
  try {
    const upfront = await client.listTools();
    const codemuxTokens = count(upfront.tools);

    const searchTokens: number[] = [];
    for (const query of ["create an issue", "read a file", "take a screenshot", "list kubernetes pods", "search the web", "run a sql query"]) {
      const answer = await client.callTool({ name: "search_tools", arguments: { query, limit: 5 } });
      searchTokens.push(encode(textOf(answer)).length);
    }
    searchTokens.sort((a, b) => a - b);

    let reachedBySearch = 0;
    let reachedByCall = 0;
    const unreached: string[] = [];
    let total = 0;
    for (const [server, tools] of catalogs) {
      for (const tool of tools) {
        total++;
        const name = `${server}__${tool.name}`;
        const search = textOf(await client.callTool({ name: "search_tools", arguments: { query: name, limit: 1, detail: "name" } }));
        const found = search.startsWith(`${name}  `);
        const call = await client.callTool({ name: "call_tool", arguments: { name, args: sampleArguments(tool.inputSchema) } });
        const called = !call.isError && textOf(call).includes(`"tool":${JSON.stringify(tool.name)}`);
        if (found) reachedBySearch++;
        if (called) reachedByCall++;
        if (!found || !called) unreached.push(`${name}${found ? "" : " (search)"}${called ? "" : ` (call: ${textOf(call).slice(0, 120)})`}`);
      }
    }
    return {
      servers: catalogs.size,
      tools: total,
      directTokens,
      codemuxTokens,
      reduction: 1 - codemuxTokens / directTokens,
      searchResponseTokens: { median: searchTokens[Math.floor(searchTokens.length / 2)]!, max: searchTokens[searchTokens.length - 1]! },
      reachedBySearch,
      reachedByCall,
      unreached,
    };
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
