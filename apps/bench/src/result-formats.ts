import { parseConfig } from "@codemux/pool";
import { Codemux, MemoryStore, toonText } from "@codemux/server";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { repoRoot } from "./paths";

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

export interface ResultFormatRow {
  result: string;
  /** As the tool gave it (some servers pretty-print). */
  jsonTokens: number;
  /** The same JSON without whitespace: what TOON must beat to be worth it. */
  compactTokens: number;
  toonTokens: number;
}

const require = createRequire(import.meta.url);

/** The entry script of a reference server installed from npm. */
function referenceServer(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0] as string);
}

/**
 * o200k tokens of real results as JSON and as TOON (`--result-format toon`): the reference filesystem
 * and memory servers' JSON answers, and snippets' typical final answers (tables of objects).
 */
export async function reportResultFormats(table: Table): Promise<ResultFormatRow[]> {
  const memoryDir = await mkdtemp(join(tmpdir(), "codemux-bench-memory-"));
  const root = repoRoot();
  const config = parseConfig(
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [referenceServer("@modelcontextprotocol/server-filesystem"), root] },
        memory: {
          command: process.execPath,
          args: [referenceServer("@modelcontextprotocol/server-memory")],
          env: { MEMORY_FILE_PATH: join(memoryDir, "memory.jsonl") },
        },
      },
    }),
    { file: "bench", env: process.env },
  );
  const core = new Codemux({ config, resultStore: new MemoryStore(), largeResultBytes: 1_000_000 });
  core.start();
  const session = core.session();
  const code = core.surface("code");
  const text = async (tool: string, args: Record<string, unknown>) => {
    const result = await code.callTool(tool, args, { session, origin: "cli" });
    return (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
  };
  const value = async (snippet: string) => {
    const answer = JSON.parse(await text("execute_code", { code: snippet })) as { result?: unknown; error?: { message: string } };
    if (answer.error) throw new Error(`bench snippet failed: ${answer.error.message}`);
    return JSON.stringify(answer.result);
  };
  try {
    await core.ready();
    const entities = Array.from({ length: 12 }, (_, i) => ({
      name: `service-${i}`,
      entityType: "service",
      observations: [`owned by team ${i % 3}`, `deployed to region eu-${i % 2}`],
    }));
    await text("call_tool", { name: "memory__create_entities", args: { entities } });
    const samples: Array<[string, string]> = [
      [
        "filesystem directory_tree (packages/core/src)",
        await text("call_tool", { name: "fs__directory_tree", args: { path: join(root, "packages/core/src") } }),
      ],
      ["memory read_graph (12 entities)", await text("call_tool", { name: "memory__read_graph", args: {} })],
      [
        "snippet: files with sizes (a table)",
        await value(
          `import { listDirectoryWithSizes } from "mcp/servers/fs/listDirectoryWithSizes";\nconst { content: text } = (await listDirectoryWithSizes({ path: ${JSON.stringify(join(root, "packages/server/src"))} })) as { content: string };\nexport default text.split("\\n").flatMap((line) => { const m = /^\\[(FILE|DIR)\\]\\s+(\\S+)\\s+(.*)$/.exec(line); return m ? [{ type: m[1], name: m[2], size: m[3] }] : []; });`,
        ),
      ],
    ];
    const rows: ResultFormatRow[] = samples
      .filter(([, json]) => json.startsWith("{") || json.startsWith("["))
      .map(([result, json]) => ({
        result,
        jsonTokens: encode(json).length,
        compactTokens: encode(JSON.stringify(JSON.parse(json))).length,
        toonTokens: encode(toonText(json) ?? json).length,
      }));
    const fewer = (from: number, to: number) => `${(((from - to) / from) * 100).toFixed(0)}%`;
    table(
      "Result formats (o200k tokens of real results: as given / compact JSON / --result-format toon)",
      rows.map((r) => [
        r.result,
        `${r.jsonTokens} / ${r.compactTokens} / ${r.toonTokens}`,
        `toon: ${fewer(r.jsonTokens, r.toonTokens)} fewer than as given, ${fewer(r.compactTokens, r.toonTokens)} fewer than compact JSON`,
      ]),
    );
    return rows;
  } finally {
    await core.close();
    await rm(memoryDir, { recursive: true, force: true });
  }
}
