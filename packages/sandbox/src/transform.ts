import { transform } from "sucrase";

export interface Stripped {
  code: string;
  /** Source map (JSON) from the JavaScript back to the TypeScript; only when asked for. */
  map?: string;
}

/**
 * Strips TypeScript types in process (sucrase): no bundler round trip, and every line stays on its
 * line, so positions are right without a map except for columns. Imports whose bindings are only
 * types are dropped, as TypeScript drops them. Throws on code it cannot parse; the caller then
 * goes through esbuild, which reports the error.
 */
export function stripTypes(code: string, filename: string, options: { map?: boolean } = {}): Stripped {
  const limit = Error.stackTraceLimit;
  // sucrase's parser makes a SyntaxError to back out of a speculative parse (the chain snippet's top-level `await` makes one); only messages are read, and the stack cost ~10 µs of its ~80.
  Error.stackTraceLimit = 0;
  let output: ReturnType<typeof transform>;
  try {
    output = run(code, filename, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
  if (!options.map || !output.sourceMap) return { code: output.code };
  return { code: output.code, map: JSON.stringify({ ...output.sourceMap, sources: [filename] }) };
}

function run(code: string, filename: string, options: { map?: boolean }): ReturnType<typeof transform> {
  return transform(code, {
    transforms: ["typescript"],
    // QuickJS runs ES2023 as written: no lowering of class fields, `??` or `?.`.
    disableESTransforms: true,
    filePath: filename,
    ...(options.map ? { sourceMapOptions: { compiledFilename: filename } } : {}),
  });
}

/** A snippet of the usual shapes (value and type imports, annotations, generics, `as`, arrows, await, loops, try). */
const WARM_UP_SNIPPET = `import { search, type Hit } from "mcp/servers/docs/search";
import type { Options } from "./options";
interface Row { id: string; score?: number; tags: string[] }
type ById = Map<string, Row>;
const limit: number = 20;
const hits = (await search({ query: "x", limit })) as Hit[];
const byId: ById = new Map<string, Row>();
for (const hit of hits) {
  const row: Row = { id: String(hit.id), score: hit.score ?? 0, tags: [...(hit.tags ?? [])] };
  if (row.tags.length > 0 && (row.score as number) > 0.5) byId.set(row.id, row);
}
function top<T extends { score?: number }>(rows: T[], n = 3): T[] {
  return rows.sort((a, b) => (b.score ?? 0) - (a.score ?? 0)).slice(0, n);
}
let note = "";
try { note = \`\${byId.size} of \${hits.length}\`; } catch (error: unknown) { note = (error as Error).message; }
export default { note, top: top([...byId.values()]).map((r) => r.id) };
`;

/**
 * Strips a typical snippet `times` times. sucrase is slow until V8 has compiled and optimized its
 * parser, and a worker strips one snippet per run: its first strip costs ~7 ms and the next ones
 * 350-1,000 µs. Called when a worker has nothing to do, it takes that cost off the first runs.
 */
export function warmUpStripTypes(times: number): void {
  for (let i = 0; i < times; i++) stripTypes(WARM_UP_SNIPPET, "warm-up.ts");
}
