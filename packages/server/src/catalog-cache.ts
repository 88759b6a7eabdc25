import type { PoolConfig } from "@codemux/pool";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface CacheFile {
  version: 1;
  servers: Record<string, Tool[]>;
}

/**
 * The last good tool lists of one config, on disk, so that a restart can answer searches at
 * once while the servers connect behind. Keyed by a hash of the resolved server specs: another
 * config (or a changed one) never sees these tools. Holds tool definitions only, no secrets.
 */
export class CatalogCache {
  readonly file: string;

  constructor(readonly dir: string, config: PoolConfig) {
    const key = createHash("sha256").update(JSON.stringify(config.servers.map((s) => [s.name, s.transport, s.tools]))).digest("hex").slice(0, 16);
    this.file = join(dir, `catalog-${key}.json`);
  }

  /** The cached tools per server, or an empty map when there is no usable cache. */
  load(): Map<string, Tool[]> {
    try {
      const data = JSON.parse(readFileSync(this.file, "utf8")) as CacheFile;
      if (data.version !== 1 || typeof data.servers !== "object" || data.servers === null) return new Map();
      return new Map(Object.entries(data.servers).filter(([, tools]) => Array.isArray(tools)));
    } catch {
      return new Map();
    }
  }

  /** Writes atomically (temp file, then rename) so a crash never leaves half a cache. */
  save(servers: Map<string, Tool[]>): void {
    mkdirSync(this.dir, { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ version: 1, servers: Object.fromEntries(servers) } satisfies CacheFile));
    renameSync(temp, this.file);
  }
}
