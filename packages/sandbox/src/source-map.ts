import { SourceMap, type SourceMapPayload } from "node:module";
import { stripNamespace } from "./bundle.js";
import { MAX_ERROR_STACK_LENGTH, MAX_FRAME_LINE_LENGTH, MAX_STACK_FRAMES } from "./defaults.js";

export interface SourcePosition {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** Frames read from a stack; a runaway recursion has thousands and the first ones say everything. */
const MAX_FRAMES_READ = 200;

/** Rewrites an engine stack's frames to positions in the modules as written. */
export interface StackPositions {
  frames(stack: string): { stack: string; positions: SourcePosition[] };
}

/** Maps positions in a bundle back to the modules as written, through esbuild's source map. */
export class BundlePositions implements StackPositions {
  readonly #map: SourceMap;
  readonly #bundleFile: string;

  constructor(options: { map: string; bundleFile: string }) {
    this.#map = new SourceMap(JSON.parse(options.map) as SourceMapPayload);
    this.#bundleFile = options.bundleFile;
  }

  /** `line` and `column` are 1-based positions in the bundle. */
  original(line: number, column: number): SourcePosition | undefined {
    return throughMap(this.#map, line, column);
  }

  frames(stack: string): { stack: string; positions: SourcePosition[] } {
    return mapFrames(stack, (frame) => {
      const found = findPosition(frame, this.#bundleFile);
      const position = found && this.original(found.line, found.column);
      return position && found ? { position, start: found.start, end: found.end } : undefined;
    });
  }
}

/**
 * Positions in modules QuickJS linked itself (the fast path): each frame names its module, and
 * lines are already right (sucrase keeps them); each module's own map, built on demand, fixes the column.
 */
export class ModulePositions implements StackPositions {
  readonly #names: string[];
  readonly #mapOf: (name: string) => string | undefined;
  readonly #maps = new Map<string, SourceMap | undefined>();

  constructor(options: { names: string[]; mapOf: (name: string) => string | undefined }) {
    // Longest first, so that "a/b.ts" is not found inside "x/a/b.ts".
    this.#names = [...options.names].sort((a, b) => b.length - a.length);
    this.#mapOf = options.mapOf;
  }

  original(file: string, line: number, column: number): SourcePosition {
    if (!this.#maps.has(file)) {
      const text = this.#mapOf(file);
      this.#maps.set(file, text === undefined ? undefined : new SourceMap(JSON.parse(text) as SourceMapPayload));
    }
    const map = this.#maps.get(file);
    const mapped = map && throughMap(map, line, column);
    return mapped ? { ...mapped, file } : { file, line, column };
  }

  frames(stack: string): { stack: string; positions: SourcePosition[] } {
    return mapFrames(stack, (frame) => {
      for (const name of this.#names) {
        const found = findPosition(frame, name);
        if (found) return { position: this.original(name, found.line, found.column), start: found.start, end: found.end };
      }
      return undefined;
    });
  }
}

function throughMap(map: SourceMap, line: number, column: number): SourcePosition | undefined {
  const entry = map.findEntry(line - 1, column - 1) as Partial<{
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

/**
 * Rewrites `at f (FILE:L:C)` frames to source positions; frames of code that is not the snippet's
 * are dropped. The stack is the guest's text: it is cut first and read without a regular
 * expression, in one pass.
 */
function mapFrames(
  stack: string,
  locate: (frame: string) => { position: SourcePosition; start: number; end: number } | undefined,
): { stack: string; positions: SourcePosition[] } {
  const positions: SourcePosition[] = [];
  const lines: string[] = [];
  let mapped = 0;
  const text = stack.length > MAX_ERROR_STACK_LENGTH ? stack.slice(0, MAX_ERROR_STACK_LENGTH) : stack;
  let start = 0;
  for (let read = 0; start < text.length && read < MAX_FRAMES_READ; read++) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const frame = text.slice(start, Math.min(end, start + MAX_FRAME_LINE_LENGTH));
    start = end + 1;
    const found = locate(frame);
    if (!found) continue;
    const { position } = found;
    mapped++;
    positions.push(position);
    if (lines.length < MAX_STACK_FRAMES) {
      lines.push(`${frame.slice(0, found.start)}${position.file}:${position.line}:${position.column}${frame.slice(found.end)}`);
    }
  }
  if (mapped > lines.length) lines.push(`    ... ${mapped - lines.length} more frames`);
  return { stack: lines.join("\n"), positions };
}

/** Finds `FILE:LINE:COLUMN` in one frame line by searching for the file name; linear in the line. */
function findPosition(frame: string, file: string): { line: number; column: number; start: number; end: number } | undefined {
  const needle = `${file}:`;
  for (let at = frame.indexOf(needle); at !== -1; at = frame.indexOf(needle, at + 1)) {
    // The name must stand alone: start of line, a space or an opening parenthesis before it.
    const before = at === 0 ? " " : frame[at - 1];
    if (before !== " " && before !== "(") continue;
    let index = at + needle.length;
    const line = digits(frame, index);
    if (!line || frame[line.end] !== ":") continue;
    index = line.end + 1;
    const column = digits(frame, index);
    if (!column) continue;
    return { line: line.value, column: column.value, start: at, end: column.end };
  }
  return undefined;
}

function digits(text: string, start: number): { value: number; end: number } | undefined {
  let end = start;
  while (end < text.length && end - start < 9 && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
  return end === start ? undefined : { value: Number(text.slice(start, end)), end };
}
