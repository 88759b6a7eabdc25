import { build, type Message, type Plugin } from "esbuild";
import { resolveSpecifier } from "./module-path.js";
import type { ModuleResolver, SandboxErrorInfo } from "./types.js";

/** esbuild namespace of every module in a bundle; none of them lives on disk. */
export const VIRTUAL_NAMESPACE = "codemux-sandbox";
const PLUGIN_NAME = "codemux-virtual-modules";

export interface BundleInput {
  code: string;
  filename: string;
  modules?: ModuleResolver;
}

export type BundleOutcome = { ok: true; code: string; map: string } | { ok: false; error: SandboxErrorInfo };

/** Bundles a snippet and its virtual imports into one ES module with an external source map. */
export async function bundleSnippet(input: BundleInput): Promise<BundleOutcome> {
  try {
    const output = await build({
      // The entry comes in on stdin: one plugin round trip fewer than a virtual entry point.
      stdin: { contents: input.code, sourcefile: input.filename, loader: "ts" },
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "es2020",
      supported: { "top-level-await": true },
      sourcemap: "external",
      sourcesContent: false,
      outfile: "bundle.js",
      logLevel: "silent",
      // An empty tsconfig keeps esbuild from looking for one on disk.
      tsconfigRaw: "{}",
      plugins: [virtualModules(input)],
    });
    const map = output.outputFiles.find((file) => file.path.endsWith(".map"));
    const code = output.outputFiles.find((file) => file.path.endsWith(".js"));
    if (!map || !code) return { ok: false, error: { kind: "internal", message: "esbuild produced no output." } };
    return { ok: true, code: code.text, map: map.text };
  } catch (error) {
    const first = (error as { errors?: Message[] }).errors?.[0];
    if (!first) return { ok: false, error: { kind: "internal", message: `Bundling failed: ${String(error)}` } };
    return { ok: false, error: describeBuildError(first, input.filename) };
  }
}

function virtualModules(input: BundleInput): Plugin {
  const sources = new Map<string, string>();
  return {
    name: PLUGIN_NAME,
    setup(build) {
      // Every path goes through here, so nothing is ever read from disk.
      build.onResolve({ filter: /.*/ }, (args) => {
        const refuse = (reason: string) => ({ errors: [{ text: `Cannot import "${args.path}": ${reason}.` }] });
        if (args.kind === "dynamic-import") return refuse("dynamic import() is not available in the sandbox");
        const resolved = resolveSpecifier(args.path, args.importer);
        if (!resolved.ok) return refuse(resolved.reason);
        if (!sources.has(resolved.path)) {
          const source = input.modules?.(resolved.path);
          if (typeof source !== "string") return refuse("no such module is available to the sandbox");
          sources.set(resolved.path, source);
        }
        return { path: resolved.path, namespace: VIRTUAL_NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: VIRTUAL_NAMESPACE }, (args) => ({
        contents: sources.get(args.path) ?? "",
        loader: "ts",
      }));
    },
  };
}

function describeBuildError(message: Message, filename: string): SandboxErrorInfo {
  const kind = message.pluginName === PLUGIN_NAME || /^(Could not resolve|No matching export)/.test(message.text) ? "import" : "syntax";
  const text = message.text.replaceAll(`"${VIRTUAL_NAMESPACE}:`, '"');
  const location = message.location;
  if (!location) return { kind, message: `${filename}: ${text}` };
  const file = stripNamespace(location.file);
  const line = location.line;
  const column = location.column + 1;
  const info: SandboxErrorInfo = { kind, message: `${file}:${line}:${column}: ${text}` };
  return file === filename ? { ...info, line, column } : info;
}

/** esbuild prefixes paths outside the file namespace with `namespace:`. */
export function stripNamespace(file: string): string {
  const prefix = `${VIRTUAL_NAMESPACE}:`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}
