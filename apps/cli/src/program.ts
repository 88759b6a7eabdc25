import { Codemux, VERSION, executionResult, resolveConfig, serveStdio, type Mode } from "@codemux/server";
import { Command, InvalidArgumentError, Option } from "commander";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { codemuxHome, defaultConfig } from "./default-config";
import { LOG_LEVELS, stderrLogger, type LogLevel } from "./logger";
import { serverTable, terminalStatus } from "./status";

/** A failure the user caused or can fix; printed as one sentence, with an exit code. */
export class UsageError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
  }
}

interface GlobalOptions {
  config?: string;
  mode: Mode;
  logLevel?: LogLevel;
  cache: boolean;
}

export interface RunContext {
  /** Servers given after the first `--`. */
  inline: string[];
  stdout: NodeJS.WritableStream;
  /** Exit code of a command that finished with a result (non-zero when a tool reported an error). */
  exitCode: number;
}

const examples = `
Config: --config FILE, else $CODEMUX_CONFIG, else ./codemux.json, else the built-in
default (a filesystem server on the current directory and a memory server).

Examples:
  codemux                                          serve over stdio (add this to your MCP client)
  codemux --config ~/.cursor/mcp.json              serve the servers of an existing client config
  codemux serve -- fs -- npx -y @modelcontextprotocol/server-filesystem .
  codemux serve -- api --transport http https://example.com/mcp -H "Authorization: Bearer $TOKEN"
  codemux list                                     servers, their state and tool counts
  codemux search "read a file"                     the search the model gets
  codemux call fs__read_text_file '{"path":"README.md","head":5}'
  echo 'export default 1 + 1' | codemux exec -     run a snippet as execute_code would
  codemux codegen --out ./mcp                      write the typed modules to disk`;

export function buildProgram(context: RunContext): Command {
  const program = new Command("codemux")
    .description("An MCP proxy: one connection for your client, many servers behind it, found by search and chained in a sandbox.")
    .version(VERSION, "-v, --version")
    .addOption(new Option("-c, --config <file>", "config file (mcpServers or servers)"))
    .addOption(new Option("-m, --mode <mode>", "code: meta-tools; passthrough: every tool listed").choices(["code", "passthrough"]).default("code"))
    .addOption(new Option("--log-level <level>", "stderr logging").choices([...LOG_LEVELS]))
    .option("--no-cache", "do not use or write the cached catalog (~/.codemux/cache)")
    .addHelpText("after", examples)
    .showHelpAfterError("(run codemux --help for usage)")
    .configureOutput({ writeOut: (s) => context.stdout.write(s) })
    .exitOverride();

  const start = async (command: Command, defaultLevel: LogLevel, serving = false): Promise<Codemux> => {
    const options = command.optsWithGlobals<GlobalOptions>();
    const config = await resolveConfig({ ...(options.config ? { configPath: options.config } : {}), inline: context.inline, fallback: () => defaultConfig() });
    const logger = stderrLogger(options.logLevel ?? defaultLevel);
    const cwd = resolve(process.cwd());
    // Clients often start servers in / or the home folder; the default filesystem server would then expose all of it.
    if (config.source === "built-in default" && (cwd === resolve("/") || cwd === resolve(homedir()))) {
      logger.warn(`the built-in filesystem server serves ${cwd} and everything under it; start codemux in a project folder or give --config`);
    }
    const core = new Codemux({
      config,
      mode: options.mode,
      logger,
      ...(options.cache ? { cacheDir: join(codemuxHome(), "cache") } : {}),
    });
    core.start({ warmSandbox: serving });
    return core;
  };
  const once = async <T>(command: Command, work: (core: Codemux) => Promise<T>): Promise<T> => {
    const core = await start(command, "warn");
    try {
      await core.settled();
      return await work(core);
    } finally {
      await core.close();
    }
  };

  program
    .command("serve", { isDefault: true })
    .description("serve MCP over stdio (the default command); servers may follow after --")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      const core = await start(command, "info", true);
      const stop = () => void core.close().finally(() => process.exit(0));
      process.once("SIGINT", stop).once("SIGTERM", stop);
      if (process.stdin.isTTY) {
        void core.ready().then(() => {
          const args = [resolve(process.argv[1] ?? "codemux"), ...(options.config ? ["--config", resolve(options.config)] : []), ...(options.mode !== "code" ? ["--mode", options.mode] : [])];
          process.stderr.write(`${terminalStatus(core, { command: process.execPath, args }, core.options.config.source)}\n`);
        });
      }
      await serveStdio(core);
      await core.close();
    });

  program
    .command("list")
    .description("list servers, their state and tool counts")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      await once(command, async (core) => {
        context.stdout.write(options.json ? `${JSON.stringify(core.status(), null, 2)}\n` : `${serverTable(core)}\n`);
        if (core.status().some((s) => s.state !== "ready")) context.exitCode = 1;
      });
    });

  program
    .command("search")
    .description("search the tools, as the model does with search_tools")
    .argument("<query...>", "what you want to do")
    .option("-n, --limit <n>", "how many results", positiveInt, 10)
    .option("-s, --server <name>", "only this server")
    .addOption(new Option("-d, --detail <detail>", "how much to show").choices(["name", "summary", "full"]).default("summary"))
    .action(async (query: string[], options: { limit: number; server?: string; detail: "name" | "summary" | "full" }, command: Command) => {
      await once(command, async (core) => {
        const text = await core.searchTools({ query: query.join(" "), limit: options.limit, detail: options.detail, ...(options.server ? { server: options.server } : {}) });
        context.stdout.write(`${text}\n`);
      });
    });

  program
    .command("call")
    .description("call one tool by its server__tool name and print the result")
    .argument("<name>", "server__tool")
    .argument("[json]", "arguments as a JSON object", "{}")
    .action(async (name: string, json: string, _options, command: Command) => {
      const args = parseJsonObject(json);
      await once(command, async (core) => {
        const result = await core.callTool(name, args);
        const texts = (result.content ?? []).map((c) => (c.type === "text" ? c.text : JSON.stringify(c)));
        context.stdout.write(`${result.structuredContent && texts.length === 0 ? JSON.stringify(result.structuredContent, null, 2) : texts.join("\n")}\n`);
        if (result.isError) context.exitCode = 1;
      });
    });

  program
    .command("exec")
    .description("run a TypeScript snippet as execute_code would (FILE, or - for stdin)")
    .argument("<file>", "snippet file, or - to read stdin")
    .option("-t, --timeout <ms>", "time limit", positiveInt, 30_000)
    .action(async (file: string, options: { timeout: number }, command: Command) => {
      const code = file === "-" ? await readStdin() : await readFile(file, "utf8").catch(() => {
        throw new UsageError(`Cannot read snippet ${file}.`);
      });
      await once(command, async (core) => {
        const run = await core.executeCode(code, { timeoutMs: options.timeout });
        const text = (executionResult(run).content[0] as { text: string }).text;
        context.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
        if (!run.ok) context.exitCode = 1;
      });
    });

  program
    .command("codegen")
    .description("write the typed wrapper modules to disk (they type-check with tsc --noEmit)")
    .requiredOption("-o, --out <dir>", "output directory")
    .action(async (options: { out: string }, command: Command) => {
      await once(command, async (core) => {
        const { files } = await core.writeModules(resolve(options.out));
        context.stdout.write(`Wrote ${files} files for ${core.catalog.size} tools of ${core.catalog.servers().length} servers to ${resolve(options.out)}\n`);
      });
    });

  return program;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The arguments are not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError("The arguments must be a JSON object, like '{\"path\": \"README.md\"}'.");
  return value as Record<string, unknown>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

