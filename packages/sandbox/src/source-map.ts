import { SourceMap, type SourceMapPayload } from "node:module";
import { stripNamespace } from "./bundle.js";

export interface SourcePosition {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

const MAX_FRAMES = 20;
const FRAME_POSITION = /([^\s()]+):(\d+):(\d+)/;

/** Maps positions in a bundle back to the modules as written, through esbuild's source map. */
export class BundlePositions {
  readonly #map: SourceMap;
  readonly #bundleFile: string;

  constructor(options: { map: string; bundleFile: string }) {
    this.#map = new SourceMap(JSON.parse(options.map) as SourceMapPayload);
    this.#bundleFile = options.bundleFile;
  }

  /** `line` and `column` are 1-based positions in the bundle. */
  original(line: number, column: number): SourcePosition | undefined {
    const entry = this.#map.findEntry(line - 1, column - 1) as Partial<{
      generatedLine: number;
      generatedColumn: number;
      originalSource: string;
      originalLine: number;
      originalColumn: number;
    }>;
    if (entry.originalSource === undefined || entry.originalLine === undefined) return undefined;
    // Within one mapped segment the printed code follows the source, so the offset carries over.
    const offset = entry.generatedLine === line - 1 ? column - 1 - (entry.generatedColumn ?? 0) : 0;
    return {
      file: stripNamespace(entry.originalSource),
      line: entry.originalLine + 1,
      column: (entry.originalColumn ?? 0) + offset + 1,
    };
  }

  /** Rewrites `at f (bundle.js:L:C)` frames to source positions; frames of code that is not the snippet's are dropped. */
  frames(stack: string): { stack: string; positions: SourcePosition[] } {
    const positions: SourcePosition[] = [];
    const lines: string[] = [];
    for (const frame of stack.split("\n")) {
      const match = FRAME_POSITION.exec(frame);
      if (!match || match[1] !== this.#bundleFile) continue;
      const position = this.original(Number(match[2]), Number(match[3]));
      if (!position) continue;
      positions.push(position);
      lines.push(frame.replace(FRAME_POSITION, `${position.file}:${position.line}:${position.column}`));
    }
    // A runaway recursion yields thousands of identical frames; the first few say everything.
    const shown = lines.length > MAX_FRAMES ? [...lines.slice(0, MAX_FRAMES), `    ... ${lines.length - MAX_FRAMES} more frames`] : lines;
    return { stack: shown.join("\n"), positions };
  }
}
