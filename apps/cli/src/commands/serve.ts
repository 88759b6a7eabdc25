import { closestNames, isLoopback, type Logger } from "@codemux/core";
import {
  CodemuxHttpServer,
  HttpError,
  listenFromEnv,
  parseListen,
  parseTokenArg,
  parseTokenFile,
  trustedProxyList,
  watchConfig,
  type HttpServeOptions,
  type HttpSettings,
  type OAuthOptions,
  type TokenSpec,
} from "@codemux/http";
import { loadConfigFile } from "@codemux/pool";
import { RESULT_FORMATS, SPILL_BYTES_RULE, isSpillBytes, type Codemux, type ResultFormat } from "@codemux/server";
import { serveStdio } from "@codemux/server/stdio";
import { InvalidArgumentError, Option, type Command } from "commander";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, renameSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { codemuxHome, VERSION } from "@codemux/server";
import { loadCodemuxConfig, openSharedState, storeSettingOf, type CodemuxConfig, type ConfigReload, type SharedState, type Started } from "@codemux/runtime";
import { startCore, type GlobalOptions, type RunContext } from "../context";
import { DaemonRunningError, signalExitCode, UsageError } from "../errors";
import { jitBudget, tuneJit } from "../jit";
import { openLocalAdmin } from "../local-admin";
import { terminalStatus } from "../status";
import { levelSink, loggerSink } from "../logger";
import {
  claimPidfile,
  healthy,
  isDaemonProcess,
  logFilePath,
  pidfilePath,
  processIdentity,
  readDaemon,
  releasePidfile,
  sleep,
  type DaemonInfo,
  type TokenSources,
} from "./daemon";
import { positiveInt } from "./shared";

const SERVE_HELP = `
Servers may be given inline after --, each as NAME then its command (stdio) or --transport http|sse URL:
  codemux serve -- fs -- npx -y @modelcontextprotocol/server-filesystem .
  codemux serve -- api --transport http https://example.com/mcp -H "Authorization: Bearer $TOKEN"

Over HTTP (one server for many clients; see packages/http/README.md):
  codemux serve --http                                  127.0.0.1:3920: /mcp, /sse, /v1 (REST), /healthz and /readyz (probes),
                                                        /metrics, and the admin page at /ui (sign in with a token that has the admin scope)
  CODEMUX_TOKEN=laptop:$(openssl rand -hex 32) codemux serve --http 0.0.0.0:3920 --allowed-host codemux.example.com
  codemux serve --http :0 --detach                      in the background; codemux status | stop | restart
  codemux serve --http 0.0.0.0:3920 --token-file tokens.json --public-url https://codemux.example.com \\
    --oauth-issuer https://login.example.com            OAuth 2.1 access tokens beside the token file (re-read on change)
  CODEMUX_HOST=0.0.0.0 CODEMUX_PORT=8080 codemux serve --http   the address from the environment (a container's);
                                                        what --http gives wins, part by part
Each principal holds at most a quarter of the sessions and of the job queue, each address a quarter of the
connections (256); the session and connection shares are lent while no one else needs them (packages/http/README.md).
The config's "http" section changes that ("limits") and names reverse proxies ("trustedProxies").
Once listening, V8 optimizes the call path sooner: CODEMUX_JIT_BUDGET=off keeps V8's default, a number
(1000 to 1000000) sets another budget (docs/debugging.md).
Several instances behind one balancer share the key signing the states handed to clients: $CODEMUX_STATE_KEY,
or "stateKey": "\${VAR}" in the config (no flag takes it: a command line shows in ps).`;

/** Set in a detached child: where its pidfile goes. */
const DAEMON_ENV = "CODEMUX_DAEMON_PIDFILE";
/** Set in a detached child: the `--token` values given to `serve --detach`, as JSON, kept out of its command line (and ps). */
const DAEMON_TOKENS_ENV = "CODEMUX_DAEMON_TOKENS";
/** A daemon's log past this size is rotated when it starts. */
const MAX_LOG_BYTES = 10 * 1024 * 1024;
/** How long `--detach` waits for the child to answer /healthz. */
const DETACH_WAIT_MS = 30_000;

interface ServeOptions {
  http?: string | true;
  debugExec?: boolean;
  token?: string[];
  tokenFile?: string;
  publicUrl?: string;
  oauthIssuer?: string;
  insecureNoAuth?: boolean;
  queryToken: boolean;
  stateless?: boolean;
  cors?: string[];
  allowedHost?: string[];
  trustedProxy?: string[];
  compatRoutes?: boolean;
  sse: boolean;
  rest: boolean;
  maxSessions?: number;
  sessionIdleMs?: number;
  maxBodyBytes?: number;
  drainMs?: number;
  spillBytes?: number;
  resultFormat?: ResultFormat;
  watch?: boolean;
  detach?: boolean;
  store?: string;
  storePrefix?: string;
  instanceId?: string;
  instanceUrl?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `codemux serve` (the default command): MCP over stdio until the client disconnects, or over HTTP with --http. */
export function registerServe(program: Command, context: RunContext): void {
  const serve = program
    .command("serve", { isDefault: true })
    .description("serve MCP over stdio (the default command), or over HTTP with --http; servers may follow after --");
  withLimitOptions(withSharingOptions(withListenOptions(serve)))
    .addHelpText("after", SERVE_HELP)
    .allowExcessArguments(true)
    .action(async (serveOptions: ServeOptions, command: Command) => {
      // Without this, a mistyped command would be taken as the default one and start a server.
      const [word] = command.args;
      if (word !== undefined) {
        const commands = program.commands.map((c) => c.name());
        const close = closestNames(word, commands, 1);
        throw new UsageError(`unknown command "${word}"${close.length ? `, did you mean \`${close[0]}\`?` : ""} Commands: ${commands.join(", ")}.`);
      }
      if (serveOptions.http !== undefined) return serveHttp(command, context, serveOptions);
      refuseHttpOnlyFlags(serveOptions);
      await serveOverStdio(command, context, serveOptions);
    });
}

/** Where and how `serve --http` listens, and whom it lets in. */
function withListenOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--http [addr]",
        "serve over HTTP at [HOST:]PORT instead of stdio; a part not given comes from $CODEMUX_HOST / $CODEMUX_PORT, else 127.0.0.1:3920 (:0 picks a free port)",
      ),
    )
    .addOption(
      new Option(
        "--token <name:token>",
        "accept this bearer token (repeatable); NAME is the principal in logs; your shell's ps shows it: prefer --token-file or $CODEMUX_TOKEN",
      ).argParser(collect),
    )
    .addOption(
      new Option(
        "--token-file <file>",
        "accept the tokens in FILE: lines of name:token, or JSON [{name, token, groups?, scopes?, expiresAt?}]; re-read when it changes",
      ),
    )
    .addOption(
      new Option(
        "--public-url <url>",
        "the URL clients reach this server at (behind a proxy): OAuth's resource and audience, and where per-principal logins come back; also http.publicUrl",
      ),
    )
    .addOption(
      new Option(
        "--oauth-issuer <url>",
        "accept OAuth access tokens (JWTs) of this authorization server beside the tokens; needs --public-url; also http.oauth",
      ),
    )
    .option("--insecure-no-auth", "serve a non-loopback address without any token (only behind an authenticating proxy)")
    .option("--no-query-token", "refuse ?apikey=TOKEN; accept tokens only in headers")
    .option("--debug-exec", "keep each snippet, its bundle and source map in ~/.codemux/debug/exec (CODEMUX_DEBUG_EXEC=1 does it over stdio only)")
    .option("--stateless", "no MCP sessions: a fresh transport per POST, for load balancers (GET /mcp answers 405)");
}

/** What several instances of `serve --http` share, and which browsers and proxies it trusts. */
function withSharingOptions(command: Command): Command {
  return command
    .option(
      "--store <store>",
      "with --http: where state shared by several instances lives: files (the default) or redis://[:PASSWORD@]HOST:PORT[/DB] (rediss:// for TLS); also $CODEMUX_STORE or the config's store",
    )
    .option(
      "--store-prefix <prefix>",
      "with --store redis://: the start of every key, so deployments can share one Redis (default codemux:); also $CODEMUX_STORE_PREFIX",
    )
    .option(
      "--instance-id <id>",
      "with --http: this instance's id, the start of its session ids that a load balancer routes on (default random); also $CODEMUX_INSTANCE_ID",
    )
    .option(
      "--instance-url <url>",
      "with --store redis://: the URL other instances forward this one's sessions to (default the bound address); also $CODEMUX_INSTANCE_URL",
    )
    .addOption(new Option("--cors <origin>", "allow this browser origin (repeatable; * for any); CORS is off otherwise").argParser(collect))
    .addOption(
      new Option("--allowed-host <host>", "accept this Host header too (repeatable), e.g. a reverse proxy's public name; * turns the check off").argParser(
        collect,
      ),
    )
    .addOption(
      new Option(
        "--trusted-proxy <addr>",
        "a reverse proxy (IP or CIDR, repeatable) whose X-Forwarded-For names the client; also http.trustedProxies in the config",
      ).argParser(collect),
    );
}

/** The routes served, the limits, how results come back, the config watch and the background mode. */
function withLimitOptions(command: Command): Command {
  return command
    .option("--compat-routes", "also serve seed 002's REST paths (/retrieve_tools, /describe_tools, /call, /exec, /tools, /call/:name, /restart, /health)")
    .option("--no-sse", "do not serve legacy HTTP+SSE (/sse, /messages)")
    .option("--no-rest", "do not serve the REST gateway (/v1)")
    .addOption(new Option("--max-sessions <n>", "open MCP sessions at most (default 100); past it, 503").argParser(positiveInt))
    .addOption(new Option("--session-idle-ms <ms>", "close a session idle this long (default 1800000)").argParser(positiveInt))
    .addOption(
      new Option(
        "--drain-ms <ms>",
        `on SIGTERM: /readyz answers 503, new sessions are refused, streams end with a retry hint, calls in flight get this long to finish (default ${DRAIN_MS_DEFAULT}, at most ${DRAIN_MS_MAX})`,
      ).argParser(drainMsArg),
    )
    .addOption(new Option("--max-body-bytes <n>", "refuse larger request bodies with 413 (default 4194304)").argParser(positiveInt))
    .addOption(
      new Option(
        "--spill-bytes <n>",
        "keep results larger than N bytes as handles to page through (default 65536, about 16k tokens; at most 1048576)",
      ).argParser(spillBytesArg),
    )
    .addOption(
      new Option(
        "--result-format <format>",
        "json: results as the tools give them (default); toon: JSON results re-encoded as TOON where that is shorter (tables of objects)",
      ).choices([...RESULT_FORMATS]),
    )
    .option("--watch", "apply edits of the config file without a restart (the default whenever a config file is served)")
    .option("--no-watch", "do not watch the config file")
    .option("--detach", "with --http: run in the background (pidfile under $CODEMUX_HOME/run); see codemux status, stop, restart");
}

/** The flags that mean nothing over stdio: a UsageError naming the first one given. */
function refuseHttpOnlyFlags(serveOptions: ServeOptions): void {
  for (const flag of [
    "detach",
    "stateless",
    "compatRoutes",
    "tokenFile",
    "token",
    "cors",
    "trustedProxy",
    "publicUrl",
    "oauthIssuer",
    "store",
    "storePrefix",
    "instanceId",
    "instanceUrl",
  ] as const) {
    if (serveOptions[flag] !== undefined)
      throw new UsageError(
        `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --http [HOST:]PORT; without it codemux serves one client over stdio.`,
      );
  }
}

/** One client over stdio, until it disconnects or a signal comes. */
async function serveOverStdio(command: Command, context: RunContext, serveOptions: ServeOptions): Promise<void> {
  const { core, config, logger, begin, reloader } = await startCore(command, context, {
    defaultLevel: "info",
    serving: true,
    // Nothing starts until the client's first real request: a 2026-07-28 client's probe only asks server/discover, then ends this process.
    deferStart: true,
    ...(serveOptions.spillBytes ? { spillBytes: serveOptions.spillBytes } : {}),
    ...(serveOptions.resultFormat ? { resultFormat: serveOptions.resultFormat } : {}),
  });
  const file = context.inline.length > 0 ? undefined : config.file;
  const watcher = (serveOptions.watch ?? true) && file !== undefined ? watchConfig({ file, core: reloader, log: loggerSink(logger) }) : undefined;
  if (watcher) logger.info(`watching ${file}: edits apply without a restart`);
  // A signal ends the session like the client leaving (children are stopped, the one exit site in index.ts is reached), with 130 or 143.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    context.exitCode = signalExitCode(signal);
    stop.abort();
  };
  // `on`, removed in finally: while it is installed the pool's own signal handler stands aside (see HTTP below).
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  if (process.stdin.isTTY) {
    // Someone at a terminal, not a client's probe: start now to show the servers' state.
    begin();
    void showStatus(core, file, command.optsWithGlobals<GlobalOptions>());
  }
  try {
    await serveStdio(core.sessions, { signal: stop.signal, onFirstRequest: begin });
  } finally {
    watcher?.close();
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await core.close();
  }
}

/** The servers' state once ready, for someone at a terminal, with the client config snippet that names what this run found. */
async function showStatus(core: Codemux, file: string | undefined, options: GlobalOptions): Promise<void> {
  await core.ready();
  // A client starts codemux in a folder of its own: the snippet names the config this run found.
  const args = [...(file ? ["--config", file] : ["--root", resolve(options.root ?? ".")]), ...(options.mode !== "code" ? ["--mode", options.mode] : [])];
  process.stderr.write(`${await terminalStatus(core, args, core.config.source)}\n`);
}

/**
 * Tokens from --token and $CODEMUX_TOKEN (each `name:token` or a bare token), the token file's checked
 * now so a mistake stops the start (the server reads it again, and on every change), and where they came from.
 */
async function collectTokens(options: ServeOptions): Promise<{ tokens: TokenSpec[]; fileTokens: number; sources: TokenSources }> {
  const flags = [...(options.token ?? []), ...handedTokens()];
  const tokens: TokenSpec[] = flags.map((t, i) => parseTokenArg(t, i === 0 ? "default" : `token${i + 1}`));
  let fileTokens = 0;
  if (options.tokenFile) {
    let text: string;
    try {
      text = await readFile(options.tokenFile, "utf8");
    } catch (error) {
      throw new UsageError(
        `Cannot read the token file ${options.tokenFile} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a readable file of name:token lines.`,
      );
    }
    fileTokens = parseTokenFile(text, options.tokenFile).length;
  }
  const env = process.env.CODEMUX_TOKEN?.trim();
  if (env) tokens.push(parseTokenArg(env, tokens.some((t) => t.name === "default") ? "env" : "default"));
  return {
    tokens,
    fileTokens,
    sources: { flags: flags.length, tokenFile: options.tokenFile ? resolve(options.tokenFile) : null, env: env ? "CODEMUX_TOKEN" : null },
  };
}

/** The `--token` values a detaching `serve` handed its daemon; read once and removed, so nothing the daemon starts inherits them. */
function handedTokens(): string[] {
  const handed = process.env[DAEMON_TOKENS_ENV];
  delete process.env[DAEMON_TOKENS_ENV];
  if (!handed) return [];
  const values: unknown = JSON.parse(handed);
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === "string") : [];
}

/** The command line without its `--token` flags (up to the inline servers' `--`): their values go to the daemon in its environment. */
function withoutTokenFlags(argv: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") return [...kept, ...argv.slice(i)];
    if (arg === "--token") i++;
    else if (!arg.startsWith("--token=")) kept.push(arg);
  }
  return kept;
}

async function serveHttp(command: Command, context: RunContext, options: ServeOptions): Promise<void> {
  // Checked before anything starts; applied once listening (see jit.ts).
  const budget = jitBudget();
  const { listen, tokens, fileTokens, sources, loaded, auth } = await httpSettings(command, context, options);
  const configFile = loaded.file;
  const pidfile = pidfilePath(configFile ?? (context.inline.length ? `inline:${context.inline.join(" ")}` : undefined));
  if (options.detach && !process.env[DAEMON_ENV]) return detach(pidfile, options.token ?? []);
  const shared = await openSharedState(storeSettingOf(options, loaded.raw, configFile), options);
  if (shared.connection && !shared.connection.up())
    process.stderr.write(`codemux: Redis at ${shared.connection.where} is not reachable yet; serving, and reconnecting in the background.\n`);

  const {
    core,
    logger,
    level,
    http: settings,
    ui,
    jobs,
    reloader,
    recorders,
  } = await startCore(command, context, {
    defaultLevel: "info",
    serving: true,
    remote: true,
    ...(options.spillBytes ? { spillBytes: options.spillBytes } : {}),
    ...(options.resultFormat ? { resultFormat: options.resultFormat } : {}),
    ...(options.debugExec ? { keepBundlesDir: join(codemuxHome(), "debug", "exec") } : {}),
    shared,
    config: loaded,
    // The HTTP server's call recorders (/metrics, the admin page's Activity): their middleware is composed into the core's pipeline.
    recordCalls: true,
    // A token file may gain tokens and OAuth admits any subject: either may serve several principals.
    manyPrincipals: tokens.length + fileTokens > 1 || options.tokenFile !== undefined || auth.oauth !== undefined,
  });
  logStoreState(shared, logger);
  const file = context.inline.length > 0 ? undefined : configFile;
  const reloads = fileReloads(file, reloader);
  const instanceUrl = options.instanceUrl ?? (process.env.CODEMUX_INSTANCE_URL?.trim() || undefined);
  let http: CodemuxHttpServer;
  try {
    http = new CodemuxHttpServer(core, {
      host: listen.host,
      port: listen.port,
      tokens,
      ...(options.tokenFile ? { tokenFile: options.tokenFile } : {}),
      ...auth,
      ...(instanceUrl ? { instanceUrl } : {}),
      ...httpServerOptions(options, settings, command.optsWithGlobals<GlobalOptions>().mode),
      // --log-level warn keeps the access log (info) out, and error keeps only failures; lines left out are not built.
      log: levelSink(level),
      logLevel: level,
      ...(reloads.reload ? { reload: reloads.reload, reloadRefused: reloads.refused } : {}),
      ui,
      ...(recorders ? { recorders } : {}),
      ...(shared.scaleOut ? { scaleOut: shared.scaleOut } : {}),
    });
    await http.listen();
    shared.registry?.start(instanceUrl ?? http.url);
    const tuned = tuneJit(budget);
    logger.debug(tuned === undefined ? "V8's interrupt budget left as it is" : `V8's interrupt budget set to ${tuned} bytes (CODEMUX_JIT_BUDGET)`);
  } catch (error) {
    await core.close();
    await shared.close();
    throw bindError(error, listen);
  }

  // `codemux forget` on this machine reaches this instance through its admin socket, and any instance of the store through Redis.
  const { daemonPidfile, localAdmin } = await registerLocally({ http, core, shared, logger }, { file, listen, sources });
  shared.forgetRequests?.answer((principal) => core.forget(principal, { elsewhere: false }));

  const watching = (options.watch ?? true) && file !== undefined;
  const watcher = watching ? watchConfig({ file, core: reloader, log: http.options.log, onResult: reloads.note }) : undefined;
  announce(http, { auth, watching: watching ? file : undefined });

  await untilSignal(() => drainAndClose(options.drainMs ?? DRAIN_MS_DEFAULT, { watcher, localAdmin, jobs, http, core, shared, daemonPidfile }));
}

/**
 * This instance's pidfile (when it runs detached) and its admin socket, through which `codemux forget` on this
 * machine reaches it; a failure closes what started and says why.
 */
async function registerLocally(
  { http, core, shared, logger }: { http: CodemuxHttpServer; core: Codemux; shared: SharedState; logger: Logger },
  { file, listen, sources }: { file: string | undefined; listen: { host: string }; sources: TokenSources },
): Promise<{ daemonPidfile: string | undefined; localAdmin: { close(): Promise<void> } }> {
  const daemonPidfile = process.env[DAEMON_ENV];
  if (daemonPidfile) {
    try {
      await claimPidfile(daemonPidfile, await daemonInfo({ url: http.url, port: http.port, file, listen, sources, logFile: logFilePath(daemonPidfile) }));
    } catch (error) {
      await http.close();
      await core.close();
      throw error;
    }
  }

  const localAdmin = await openLocalAdmin(core, { url: http.url, home: codemuxHome(), logger }).catch(async (error: unknown) => {
    await http.close();
    await core.close();
    await shared.close();
    if (daemonPidfile) releasePidfile(daemonPidfile);
    throw new UsageError(
      `cannot open this instance's admin socket under ${codemuxHome()}/run (${(error as Error).message}); check that folder is yours and writable.`,
      1,
    );
  });
  return { daemonPidfile, localAdmin };
}

/** On SIGTERM: finish calls in flight for at most `drainMs`, then close everything, the pidfile last; past the bound and a margin the process exits. */
async function drainAndClose(
  drainMs: number,
  {
    watcher,
    localAdmin,
    jobs,
    http,
    core,
    shared,
    daemonPidfile,
  }: {
    watcher: { close(): void } | undefined;
    localAdmin: { close(): Promise<void> };
    jobs: Started["jobs"];
    http: CodemuxHttpServer;
    core: Codemux;
    shared: SharedState;
    daemonPidfile: string | undefined;
  },
): Promise<void> {
  process.stderr.write(`codemux: draining (finishing calls in flight, at most ${drainMs} ms)\n`);
  // A downstream server or Redis that will not close must not keep the process past its bound.
  setTimeout(() => process.exit(1), drainMs + CLOSE_MARGIN_MS).unref();
  watcher?.close();
  try {
    await localAdmin.close();
    // Still registered (and beating) while draining: a request for one of its sessions forwarded by another instance is served; shared.close() leaves at exit.
    await jobs?.drain();
    await http.drain(drainMs);
    await core.close();
    await shared.close();
  } finally {
    if (daemonPidfile) releasePidfile(daemonPidfile);
  }
}

/** What `serve --http` reads before it starts: the address, the tokens, the config (once) and its OAuth; a mistake in any is a UsageError. */
async function httpSettings(
  command: Command,
  context: RunContext,
  options: ServeOptions,
): Promise<{
  listen: { host: string; port: number };
  tokens: TokenSpec[];
  fileTokens: number;
  sources: TokenSources;
  loaded: CodemuxConfig;
  auth: { publicUrl?: string; oauth?: OAuthOptions };
}> {
  const globals = command.optsWithGlobals<GlobalOptions>();
  let listen: { host: string; port: number };
  try {
    // Each part --http gives wins over CODEMUX_HOST / CODEMUX_PORT, which win over the defaults.
    listen = parseListen(options.http === true ? undefined : options.http, listenFromEnv());
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { tokens, fileTokens, sources } = await collectTokens(options).catch((error: unknown) => {
    throw HttpError.isInstance(error) ? new UsageError(error.message) : error;
  });
  // Read once here: the http section and the store are needed before the start, which is handed the same config.
  const loaded = await loadCodemuxConfig({ configPath: globals.config, inline: context.inline, serving: true });
  const auth = oauthOf(options, loaded.serving?.http ?? {});
  if (tokens.length + fileTokens === 0 && !auth.oauth && !isLoopback(listen.host) && !options.insecureNoAuth) {
    throw new UsageError(
      `refusing to serve ${listen.host}:${listen.port} without a token: anyone who can reach it could run tools. Set --token, --token-file or CODEMUX_TOKEN, bind 127.0.0.1, or pass --insecure-no-auth if a proxy in front authenticates.`,
    );
  }
  try {
    trustedProxyList(options.trustedProxy ?? []);
  } catch (error) {
    throw new UsageError(`--trusted-proxy: ${(error as Error).message}`);
  }
  return { listen, tokens, fileTokens, sources, loaded, auth };
}

/** The HTTP server's options the flags and the config's http section give (the flags' routes and limits, the config's proxies and per-principal limits). */
function httpServerOptions(options: ServeOptions, settings: HttpSettings, mode: string | undefined): HttpServeOptions {
  return {
    insecureNoAuth: options.insecureNoAuth ?? false,
    allowQueryToken: options.queryToken,
    stateless: options.stateless ?? false,
    legacySse: options.sse,
    rest: options.rest,
    compatRoutes: options.compatRoutes ?? false,
    corsOrigins: options.cors ?? [],
    allowedHosts: options.allowedHost ?? [],
    trustedProxies: [...(settings.trustedProxies ?? []), ...(options.trustedProxy ?? [])],
    ...(settings.maxConnectionsPerAddress ? { maxConnectionsPerAddress: settings.maxConnectionsPerAddress } : {}),
    ...(settings.maxSessionsPerPrincipal ? { maxSessionsPerPrincipal: settings.maxSessionsPerPrincipal } : {}),
    ...(settings.principalLimits ? { principalLimits: settings.principalLimits } : {}),
    ...(mode ? { mode } : {}),
    ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    ...(options.sessionIdleMs ? { sessionIdleMs: options.sessionIdleMs } : {}),
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
  };
}

/** Says when the store goes away and comes back, and checks its durability at each (re)connection: a Redis restarted with other settings is noticed too. */
function logStoreState(shared: SharedState, logger: Logger): void {
  const checkDurability = () => void shared.connection?.durability().then((warning) => warning && logger.warn(warning));
  if (shared.connection?.up()) checkDurability();
  shared.connection?.onStateChange((up, reason) => {
    const where = shared.connection?.where;
    if (up) checkDurability();
    if (up) logger.info(`Redis at ${where} is back: calls that need shared state work again`);
    else logger.warn(`Redis at ${where} went away${reason ? ` (${reason})` : ""}: calls that need shared state fail until it is back; reconnecting`);
  });
}

/**
 * /restart's reload of the served file, and why its last edit was refused until one applies (/readyz and the
 * admin page say it, as the log does); `note` is the file watch's, so both keep the same state.
 */
function fileReloads(
  file: string | undefined,
  reloader: Started["reloader"],
): { reload?: () => Promise<ConfigReload>; refused: () => string | undefined; note: (result: { ok: true } | { ok: false; error: string }) => void } {
  let refused: string | undefined;
  const note = (result: { ok: true } | { ok: false; error: string }) => {
    refused = result.ok ? undefined : result.error;
  };
  const reload = file
    ? async () => {
        try {
          const summary = await reloader.reload(await loadConfigFile(file));
          note({ ok: true });
          return summary;
        } catch (error) {
          note({ ok: false, error: (error as Error).message });
          throw error;
        }
      }
    : undefined;
  return { ...(reload ? { reload } : {}), refused: () => refused, note };
}

/** A failure to bind or a bad option value as the user's to fix (exit 2); anything else as it is. */
function bindError(error: unknown, listen: { host: string; port: number }): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE")
    return new UsageError(`${listen.host}:${listen.port} is in use; pick another port with --http HOST:PORT (or :0 for any free one).`);
  if (code === "EACCES" || code === "EADDRNOTAVAIL")
    return new UsageError(`cannot bind ${listen.host}:${listen.port} (${code}); use another address or a port above 1023.`);
  // A bad option value (a --public-url with a path) is the user's to fix: exit 2.
  if (HttpError.isInstance(error) || error instanceof RangeError) return new UsageError(error.message);
  return error;
}

/** What a detached daemon writes in its pidfile: where it serves, how it was started, and who it is. */
async function daemonInfo({
  url,
  port,
  file,
  listen,
  sources,
  logFile,
}: {
  url: string;
  port: number;
  file: string | undefined;
  listen: { host: string };
  sources: TokenSources;
  logFile: string;
}): Promise<DaemonInfo> {
  return {
    pid: process.pid,
    url,
    configPath: file ?? null,
    logFile,
    startedAt: new Date().toISOString(),
    version: VERSION,
    argv: process.argv.slice(1),
    cwd: process.cwd(),
    listenEnv: listenEnvOf(process.env),
    listen: { host: listen.host, port },
    auth: sources,
    process: (await processIdentity(process.pid)) ?? null,
  };
}

/** The one line `serve --http` prints once it serves: its URLs, its tokens, OAuth and the config watch. */
function announce(http: CodemuxHttpServer, { auth, watching }: { auth: { oauth?: OAuthOptions }; watching: string | undefined }): void {
  const names = http.tokenNames;
  const notes = [
    `${names.length} token${names.length === 1 ? "" : "s"}${names.length ? ` (${names.join(", ")})` : auth.oauth ? "" : ", no auth"}`,
    auth.oauth ? `OAuth tokens of ${auth.oauth.issuer}` : undefined,
    watching ? `watching ${watching}` : undefined,
  ].filter(Boolean);
  process.stderr.write(`codemux: serving ${http.url}/mcp (REST ${http.url}/v1, admin page ${http.url}/ui; ${notes.join("; ")})\n`);
}

/** Waits for SIGINT or SIGTERM, then runs `shutdown`; the handler stays installed until it ends (not `once`): the pool's own stands aside only while another listener exists. */
async function untilSignal(shutdown: () => Promise<void>): Promise<void> {
  let onSignal: () => void = () => undefined;
  await new Promise<void>((resolveStop) => {
    onSignal = () => resolveStop();
    process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  });
  try {
    await shutdown();
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
  }
}

/** The public URL and OAuth settings: the flags win over the config's `http.publicUrl` and `http.oauth`. */
function oauthOf(options: ServeOptions, settings: HttpSettings): { publicUrl?: string; oauth?: OAuthOptions } {
  const publicUrl = options.publicUrl ?? settings.publicUrl;
  const oauth = options.oauthIssuer ? { ...settings.oauth, issuer: options.oauthIssuer } : settings.oauth;
  if (oauth && !publicUrl)
    throw new UsageError("OAuth needs the URL clients reach codemux at: set --public-url (or http.publicUrl), which access tokens must be issued for.");
  return { ...(publicUrl ? { publicUrl } : {}), ...(oauth ? { oauth } : {}) };
}

/** `--drain-ms`: how long calls in flight get on SIGTERM; past it and this margin the process exits however its closing goes. */
export const DRAIN_MS_DEFAULT = 30_000;
const DRAIN_MS_MAX = 600_000;
export const CLOSE_MARGIN_MS = 10_000;

function drainMsArg(value: string): number {
  const ms = positiveInt(value);
  if (ms > DRAIN_MS_MAX) throw new InvalidArgumentError(`expected at most ${DRAIN_MS_MAX} (ten minutes).`);
  return ms;
}

function spillBytesArg(value: string): number {
  const bytes = /^\d{1,8}$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!isSpillBytes(bytes)) throw new InvalidArgumentError(`expected ${SPILL_BYTES_RULE}.`);
  return bytes;
}

/** The listen variables that are set, as `restart` must give them again. */
function listenEnvOf(env: NodeJS.ProcessEnv): DaemonInfo["listenEnv"] {
  return Object.fromEntries(["CODEMUX_HOST", "CODEMUX_PORT"].flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
}

/** Starts this same command in the background with its output in a log file, and waits until it answers. */
async function detach(pidfile: string, tokenFlags: string[]): Promise<void> {
  const existing = readDaemon(pidfile);
  if (existing && (await isDaemonProcess(existing))) throw new DaemonRunningError(existing);
  const logFile = logFilePath(pidfile);
  mkdirSync(dirname(logFile), { recursive: true, mode: 0o700 });
  // Rotated at start: one previous log is kept, so a long-lived daemon's log stays bounded across restarts.
  if (existsSync(logFile) && statSync(logFile).size > MAX_LOG_BYTES) renameSync(logFile, `${logFile}.1`);
  const out = openSync(logFile, "a", 0o600);
  const args = [...process.execArgv, ...withoutTokenFlags(process.argv.slice(1).filter((a) => a !== "--detach"))];
  const env = { ...process.env, [DAEMON_ENV]: pidfile, ...(tokenFlags.length ? { [DAEMON_TOKENS_ENV]: JSON.stringify(tokenFlags) } : {}) };
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", out, out], env });
  child.unref();
  const deadline = Date.now() + DETACH_WAIT_MS;
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  while (Date.now() < deadline && exited === undefined) {
    const info = readDaemon(pidfile);
    if (info && info.pid === child.pid && (await healthy(info.url, 1000))) {
      process.stdout.write(
        `codemux serving ${info.url}/mcp in the background\n  pid ${info.pid}\n  log ${logFile}\n  stop with: codemux stop${info.configPath ? ` --config ${info.configPath}` : ""}\n`,
      );
      return;
    }
    await sleep(100);
  }
  if (exited !== undefined) throw new UsageError(`the background server exited (code ${exited}) before answering; see ${logFile}.`, 1);
  throw new UsageError(`the background server (pid ${child.pid}) did not answer within ${DETACH_WAIT_MS / 1000} s; it is still running, see ${logFile}.`, 1);
}
