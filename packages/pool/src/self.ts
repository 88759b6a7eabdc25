import { realpathSync } from "node:fs";
import type { StdioTransportSpec } from "./config/types";
import { DEPTH_VARIABLE, MAX_SPAWN_DEPTH } from "./defaults";

const selfPaths = new Set<string>();
const RUNNERS = new Set(["npx", "pnpx", "bunx"]);
// Runners that take a sub-command first: `pnpm dlx codemux`, `npm exec codemux`, `yarn dlx codemux`, `bun x codemux`.
const SUBCOMMAND_RUNNERS = new Map([
  ["pnpm", ["dlx", "exec"]],
  ["npm", ["exec", "x"]],
  ["yarn", ["dlx", "exec"]],
  ["bun", ["x"]],
]);
const SCRIPT_RUNNERS = new Set(["node", "nodejs", "bun", "deno", "tsx"]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "cmd", "powershell", "pwsh"]);
// codemux's own entry file wherever it is installed (a checkout, a package, npm's bin link); not any file under
// node_modules/codemux/, which holds codemux's own dependencies too (the built-in default's servers).
const CLI_SCRIPT =
  /(?:^|[\\/])(?:apps[\\/]cli[\\/](?:dist|src)[\\/]index\.[cm]?[jt]s|node_modules[\\/](?:codemux[\\/]dist[\\/]index\.[cm]?js|\.bin[\\/]codemux(?:\.cmd|\.ps1)?))$/i;

/**
 * Records the path of the running codemux's own script (`process.argv[1]` in the CLI), so that an
 * entry starting that file is recognized as codemux itself wherever it is installed, also through a
 * link (npm's `bin/codemux` links to the package's entry file).
 * @example markSelf(process.argv[1]);
 */
export function markSelf(...paths: Array<string | undefined>): void {
  for (const path of paths) if (path) for (const form of [path, resolved(path)]) selfPaths.add(normalize(form));
}

/** How many codemux pools are above this process (0 when codemux was not started by codemux). */
export function spawnDepth(env: NodeJS.ProcessEnv = process.env): number {
  const depth = Number.parseInt(env[DEPTH_VARIABLE] ?? "", 10);
  return Number.isFinite(depth) && depth > 0 ? depth : 0;
}

/** The marker every stdio server gets in its environment: one level deeper than this process. */
export function childMarker(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { [DEPTH_VARIABLE]: String(spawnDepth(env) + 1) };
}

/** True when the command line starts codemux: `codemux`, `npx [-y] codemux[@v]`, `pnpm dlx codemux`, `node .../apps/cli/dist/index.js`, `sh -c "codemux ..."`. */
export function isCodemuxCommand(command: string, args: readonly string[], nesting = 0): boolean {
  const name = baseName(command);
  if (name === "codemux" || isSelfPath(command) || CLI_SCRIPT.test(command.replace(/\\/g, "/"))) return true;
  if (RUNNERS.has(name)) return packageArgument(args) !== undefined && isCodemuxPackage(packageArgument(args)!, args);
  const sub = SUBCOMMAND_RUNNERS.get(name);
  if (sub) {
    const index = args.findIndex((a) => !a.startsWith("-"));
    if (index < 0 || !sub.includes(args[index]!)) return false;
    const rest = args.slice(index + 1);
    return packageArgument(rest) !== undefined && isCodemuxPackage(packageArgument(rest)!, rest);
  }
  if (SCRIPT_RUNNERS.has(name)) {
    const script = args.find((a) => !a.startsWith("-"));
    return script !== undefined && (isSelfPath(script) || CLI_SCRIPT.test(script.replace(/\\/g, "/")) || baseName(script) === "codemux");
  }
  if (SHELLS.has(name) && nesting < 2) {
    const flag = args.findIndex((a) => /^(?:-[a-z]*c|\/c|-command)$/i.test(a));
    const line = flag >= 0 ? args[flag + 1] : undefined;
    if (!line) return false;
    return line.split(/\s*(?:&&|\|\||;|\|)\s*/).some((part) => {
      const words = part
        .trim()
        .split(/\s+/)
        .filter((w) => w && !/^\w+=/.test(w) && w !== "exec");
      return (
        words.length > 0 &&
        isCodemuxCommand(
          words[0]!.replace(/^["']|["']$/g, ""),
          words.slice(1).map((w) => w.replace(/^["']|["']$/g, "")),
          nesting + 1,
        )
      );
    });
  }
  return false;
}

/** Why this stdio entry must not be started here, or undefined when it may. */
export function selfSpawnReason(spec: StdioTransportSpec, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (isCodemuxCommand(spec.command, spec.args)) {
    return `it starts codemux itself ("${[spec.command, ...spec.args].join(" ")}"), which would start its own servers again without end; it is skipped, and the other servers are served`;
  }
  const depth = spawnDepth(env);
  if (depth >= MAX_SPAWN_DEPTH) {
    return `codemux is running ${depth} levels deep inside codemux (${DEPTH_VARIABLE}=${depth}), so an entry starts codemux again through a wrapper; no stdio server is started at this depth, to stop the loop`;
  }
  return undefined;
}

function packageArgument(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return args[i + 1];
    if (arg === "-p" || arg === "--package") {
      i += 1;
      continue;
    }
    if (!arg.startsWith("-")) return arg;
  }
  return undefined;
}

function isCodemuxPackage(spec: string, args: readonly string[]): boolean {
  const packages = [spec, ...args.flatMap((a, i) => (a === "-p" || a === "--package" ? [args[i + 1] ?? ""] : a.startsWith("--package=") ? [a.slice(10)] : []))];
  return packages.some((p) => /^codemux(?:@[^/]*)?$/i.test(p)) && (spec === "codemux" || /^codemux@/i.test(spec) || baseName(spec) === "codemux");
}

function baseName(path: string): string {
  return (path.split(/[\\/]/).pop() ?? path).toLowerCase().replace(/\.(?:cmd|exe|ps1|bat|[cm]?js)$/, "");
}

/** True when `path` is, or links to, the running codemux's own script. */
function isSelfPath(path: string): boolean {
  return selfPaths.size > 0 && (selfPaths.has(normalize(path)) || selfPaths.has(normalize(resolved(path))));
}

/** The file a path names once links are followed; the path itself when it names nothing (a bare command). */
function resolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function normalize(path: string): string {
  return path.replace(/\\/g, "/").replace(/\/+/g, "/");
}
