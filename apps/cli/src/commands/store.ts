import { STORE_KEY_PATTERN } from "@codemux/core";
import { importEntries } from "@codemux/redis";
import { FileStore, codemuxHome, findConfigFile } from "@codemux/server";
import type { Command } from "commander";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { openStoreClient, readRawConfig, storeSettingOf, type StoreFlags } from "@codemux/runtime";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";

/** `codemux store import`: moves what the files store holds (the catalog cache) into the Redis store the flags, environment or config name. */
export function registerStore(program: Command, context: RunContext): void {
  const store = program.command("store").description("shared state for several instances: move the files store into Redis");
  store
    .command("import")
    .description("copy the files store (the catalog cache in $CODEMUX_HOME/cache) into the Redis store, so new instances answer at once")
    .option("--store <store>", "the Redis store: redis://[:PASSWORD@]HOST:PORT[/DB] (rediss:// for TLS); else $CODEMUX_STORE, else the config's store")
    .option("--store-prefix <prefix>", "the start of every key (default codemux:); else $CODEMUX_STORE_PREFIX")
    .action(async (flags: StoreFlags, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const file = findConfigFile(globals.config ? { configPath: globals.config } : {})?.file;
      const setting = storeSettingOf(flags, await readRawConfig(file), file);
      if (setting.kind !== "redis") throw new UsageError("codemux store import needs a Redis store: give --store redis://HOST:PORT (or set CODEMUX_STORE).");
      const dir = join(codemuxHome(), "cache");
      const keys = (await readdir(dir).catch(() => [] as string[])).filter((name) => STORE_KEY_PATTERN.test(name) && !name.endsWith(".tmp"));
      const shared = await openStoreClient(setting, {
        unreachable: (where, reason) => `Redis at ${where} is not reachable (${reason}); start it (or fix --store) and run codemux store import again.`,
      });
      try {
        const report = await importEntries(new FileStore({ dir }), shared.cacheStore as NonNullable<typeof shared.cacheStore>, { keys });
        context.stdout.write(
          `Imported ${report.imported.length} ${report.imported.length === 1 ? "entry" : "entries"} from ${dir} into ${shared.connection?.where} (prefix ${setting.prefix})${report.skipped.length ? `; skipped ${report.skipped.length} expired or unreadable` : ""}.\n`,
        );
      } finally {
        await shared.close();
      }
    });
}
