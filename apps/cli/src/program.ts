import { BUILT_IN_SURFACES, VERSION } from "@codemux/server";
import { Command, Option } from "commander";
import { registerApprove } from "./commands/approve";
import { registerAuth } from "./commands/auth";
import { registerCall } from "./commands/call";
import { registerCodegen } from "./commands/codegen";
import { registerExec } from "./commands/exec";
import { registerForget } from "./commands/forget";
import { registerImport } from "./commands/import";
import { registerInstall } from "./commands/install";
import { registerJobs } from "./commands/jobs";
import { registerList } from "./commands/list";
import { registerPolicy } from "./commands/policy";
import { registerSearch } from "./commands/search";
import { registerRestart } from "./commands/restart";
import { registerServe } from "./commands/serve";
import { registerSkills } from "./commands/skills";
import { registerStatus } from "./commands/status";
import { registerStop } from "./commands/stop";
import { registerStore } from "./commands/store";
import type { RunContext } from "./context";
import { LOG_LEVELS } from "@codemux/core";

const examples = `
Config: --config FILE, else $CODEMUX_CONFIG, else ./codemux.json, else ~/.codemux/codemux.json
(what codemux install writes; $CODEMUX_HOME moves it), else the built-in default (a filesystem
server on --root, the current directory by default, and a memory server).
Environment: CODEMUX_CONFIG, CODEMUX_LOG_LEVEL, CODEMUX_REFRESH_CACHE=1, CODEMUX_CATALOG_CACHE_TTL_MS,
CODEMUX_HOME (default ~/.codemux); CODEMUX_CALL_LANE=0, CODEMUX_SERVER_LANE=0,
CODEMUX_SANDBOX_FAST_PATH=0 and CODEMUX_JSON_ANSWERS=0 for debugging (docs/debugging.md).

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

/** The command line: global options, then one file per command under ./commands. */
export function buildProgram(context: RunContext): Command {
  const program = new Command("codemux")
    .description("An MCP proxy: one connection for your client, many servers behind it, found by search and chained in a sandbox.")
    .version(VERSION, "-v, --version")
    .addOption(new Option("-c, --config <file>", "config file (mcpServers or servers); without it, the lookup that codemux --help describes"))
    .addOption(
      new Option("-m, --mode <mode>", "code: meta-tools; passthrough: every tool listed; dispatch: one tool")
        .choices(Object.keys(BUILT_IN_SURFACES))
        .default("code"),
    )
    .addOption(
      new Option("--log-level <level>", "stderr logging; debug logs every call; warn or error leaves out the HTTP access log").choices([...LOG_LEVELS]),
    )
    .addOption(
      new Option(
        "--root <dir>",
        "folder the built-in filesystem server serves (default: the current folder), and the root servers are told unless their entry sets roots",
      ),
    )
    .option("--allow-broad-root", "let the built-in filesystem server serve / or your home folder")
    .option("--no-cache", "do not use or write the cached catalog (~/.codemux/cache)")
    .option("--lazy", "start each server only when a call needs it (its tools come from the cached catalog until then)")
    .option("--refresh-cache", "ignore the cached catalog at start (still write it); or CODEMUX_REFRESH_CACHE=1")
    .addHelpText("after", examples)
    // Each command's --help lists these too: `codemux list --config FILE` works as `codemux --config FILE list` does.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(run codemux --help for usage)")
    .showSuggestionAfterError(true)
    .configureOutput({ writeOut: (s) => context.stdout.write(s) })
    .exitOverride();
  for (const register of [registerServe, registerList, registerSearch, registerCall, registerExec, registerCodegen, registerApprove])
    register(program, context);
  registerForget(program, context);
  registerStatus(program, context);
  registerStop(program, context);
  registerRestart(program, context);
  registerSkills(program, context);
  registerAuth(program, context);
  registerInstall(program, context);
  registerImport(program, context);
  registerJobs(program, context);
  registerPolicy(program, context);
  registerStore(program, context);
  return program;
}
