import type { PoolConfig } from "@codemux/pool";
import { mkdtemp, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { watchConfig, type LogRecord, type ReloadSummary } from "../src/index";

const servers = (names: string[]) => JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, { command: "node", args: ["-e", "0"] }])) });

/** Resolves at the watcher's next result. */
function nextResult(results: Array<{ ok: boolean }>, count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = setInterval(() => {
      if (results.length >= count) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
}

describe("config watcher", () => {
  it("applies a good edit once (debounced), keeps the last good config after a bad one, and follows a rename-over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-watch-"));
    const file = join(dir, "codemux.json");
    await writeFile(file, servers(["a"]));
    const applied: PoolConfig[] = [];
    const results: Array<{ ok: boolean; error?: string; summary?: ReloadSummary }> = [];
    const logs: LogRecord[] = [];
    const core = {
      reload: async (config: PoolConfig): Promise<ReloadSummary> => {
        applied.push(config);
        return { added: ["b"], removed: [], changed: [] };
      },
    };
    const watcher = watchConfig({ file, core, debounceMs: 100, log: (r) => logs.push(r), onResult: (r) => results.push(r) });
    try {
      // An editor's several writes in a row are applied once.
      await writeFile(file, servers(["a"]).slice(0, 5));
      await writeFile(file, servers(["a", "b"]));
      await nextResult(results, 1);
      expect(applied).toHaveLength(1);
      expect(results[0]).toMatchObject({ ok: true, summary: { added: ["b"] } });

      await writeFile(file, '{ "mcpServers": { "a": { "command": 5 } } }');
      await nextResult(results, 2);
      expect(results[1]?.ok).toBe(false);
      expect(applied).toHaveLength(1);
      expect(logs.at(-1)).toMatchObject({ level: "warn", msg: "config not reloaded; the last good config keeps serving" });

      await writeFile(join(dir, "next.json"), servers(["a", "c"]));
      await rename(join(dir, "next.json"), file);
      await nextResult(results, 3);
      expect(results[2]?.ok).toBe(true);
      expect(applied.at(-1)?.servers.map((s) => s.name)).toEqual(["a", "c"]);
    } finally {
      watcher.close();
    }
  });
});
