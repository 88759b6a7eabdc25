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
