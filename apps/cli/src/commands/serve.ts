import { closestNames } from "@codemux/catalog";
import { serveStdio } from "@codemux/server/stdio";
import type { Command } from "commander";
import { resolve } from "node:path";
import { UsageError, startCore, type GlobalOptions, type RunContext } from "../context";
import { terminalStatus } from "../status";

const SERVE_HELP = `
Servers may be given inline after --, each as NAME then its command (stdio) or --transport http|sse URL:
  codemux serve -- fs -- npx -y @modelcontextprotocol/server-filesystem .
  codemux serve -- api --transport http https://example.com/mcp -H "Authorization: Bearer $TOKEN"`;

/** `codemux serve` (the default command): MCP over stdio until the client disconnects. */
export function registerServe(program: Command, context: RunContext): void {
  program
    .command("serve", { isDefault: true })
    .description("serve MCP over stdio (the default command); servers may follow after --")
    .addHelpText("after", SERVE_HELP)
    .allowExcessArguments(true)
    .action(async (_options, command: Command) => {
      // Without this, a mistyped command would be taken as the default one and start a server.
      const [word] = command.args;
      if (word !== undefined) {
        const commands = program.commands.map((c) => c.name());
        const close = closestNames(word, commands, 1);
        throw new UsageError(`unknown command "${word}"${close.length ? `, did you mean \`${close[0]}\`?` : ""} Commands: ${commands.join(", ")}.`);
      }
      const options = command.optsWithGlobals<GlobalOptions>();
      const { core } = await startCore(command, context, { defaultLevel: "info", serving: true });
      // A signal ends the session like the client leaving: children are stopped and the one exit site in index.ts is reached.
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
      if (process.stdin.isTTY) {
        void core.ready().then(async () => {
          const args = [
            resolve(process.argv[1] ?? "codemux"),
            ...(options.config ? ["--config", resolve(options.config)] : ["--root", resolve(options.root ?? ".")]),
            ...(options.mode !== "code" ? ["--mode", options.mode] : []),
          ];
          process.stderr.write(`${await terminalStatus(core, { command: process.execPath, args }, core.options.config.source)}\n`);
        });
      }
      try {
        await serveStdio(core, { signal: stop.signal });
      } finally {
        process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
        await core.close();
      }
    });
}
