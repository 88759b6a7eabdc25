import { approvePins, filePinBook, listPending, pinFileOfConfig, sharedPinBook, type PinBook } from "@codemux/hooks";
import type { RecordTable } from "@codemux/core";
import type { Command } from "commander";
import { dirname, resolve } from "node:path";
import { openStoreClient, readRawConfig, storeSettingOf, type StoreFlags } from "@codemux/runtime";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";
import { codemuxHome, findConfigFile } from "@codemux/server";

/**
 * `codemux approve SERVER[__TOOL]`: lets a tool the pin plugin quarantined (its definition changed, or its server is new) through again;
 * also what the scan holds besides tools: `SERVER:instructions`, `SERVER:prompt:NAME`, `SERVER:resource:URI`, `SERVER:resourceTemplate:TEMPLATE`, `SERVER:skill:URI`.
 */
export function registerApprove(program: Command, context: RunContext): void {
  program
    .command("approve")
    .description(
      "approve tools the pin plugin quarantined, and instructions, resources and prompts the scan holds: SERVER (all it has waiting), SERVER__TOOL, or a name --list shows (SERVER:instructions, SERVER:prompt:NAME...)",
    )
    .argument("[target]", "SERVER, SERVER__TOOL or SERVER:KIND:ID")
    .option("--list", "list the tools waiting for approval, and why")
    .option("--file <file>", "the pin file (default: plugins.pin.file of the config, else pins.json in $CODEMUX_HOME or ~/.codemux)")
    .option("--store <store>", "the Redis store instances share pins in: redis://HOST:PORT; else $CODEMUX_STORE, else the config's store")
    .option("--store-prefix <prefix>", "the start of every key (default codemux:); else $CODEMUX_STORE_PREFIX")
    .action(async (target: string | undefined, options: StoreFlags & { list?: boolean; file?: string }, command: Command) => {
      const { book, where, close } = await openPins(options, command.optsWithGlobals<GlobalOptions>().config);
      try {
        if (options.list || target === undefined) {
          const pending = listPending(await book.load());
          context.stdout.write(
            pending.length ? `Waiting for approval (${where}):\n${pending.map((p) => `  ${p}`).join("\n")}\n` : `Nothing waits for approval (${where}).\n`,
          );
          return;
        }
        const { approved, pending } = await approvePins(book, target);
        if (approved.length === 0) {
          throw new UsageError(
            `Nothing named "${target}" waits for approval in ${where}. ${pending.length ? `Waiting: ${pending.join("; ")}.` : "No tool waits for approval."}`,
          );
        }
        context.stdout.write(`Approved ${approved.join(", ")}; a running codemux lets ${approved.length === 1 ? "it" : "them"} through from the next call.\n`);
      } finally {
        await close();
      }
    });
}

/** The pins `serve` would use: the shared ones when a Redis store is set (and no --file), else the pin file. */
async function openPins(
  options: StoreFlags & { file?: string },
  configOption: string | undefined,
): Promise<{ book: PinBook; where: string; close(): Promise<void> }> {
  const configFile = findConfigFile(configOption ? { configPath: configOption } : {})?.file;
  // Read once: the store setting and the pin file are both the config's.
  const raw = options.file ? undefined : await readRawConfig(configFile);
  const setting = options.file ? undefined : storeSettingOf(options, raw, configFile);
  if (setting?.kind === "redis") {
    const store = await openStoreClient(setting, {
      unreachable: (where, reason) => `Redis at ${where} is not reachable (${reason}); start it (or fix --store) and run codemux approve again.`,
    });
    return {
      book: sharedPinBook(store.pinRecords as RecordTable),
      where: `the shared pins in Redis at ${store.connection?.where}`,
      close: () => store.close(),
    };
  }
  const file = options.file
    ? resolve(options.file)
    : pinFileOfConfig({ config: raw, configDir: configFile ? dirname(configFile) : process.cwd(), dataDir: codemuxHome() });
  return { book: filePinBook(file), where: file, close: async () => undefined };
}
