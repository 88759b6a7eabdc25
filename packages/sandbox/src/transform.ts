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
  const output = transform(code, {
    transforms: ["typescript"],
    // QuickJS runs ES2023 as written: no lowering of class fields, `??` or `?.`.
    disableESTransforms: true,
    filePath: filename,
    ...(options.map ? { sourceMapOptions: { compiledFilename: filename } } : {}),
  });
  if (!options.map || !output.sourceMap) return { code: output.code };
  return { code: output.code, map: JSON.stringify({ ...output.sourceMap, sources: [filename] }) };
}
