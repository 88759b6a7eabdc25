import { isSwitchedOff } from "@codemux/core";

/** Whether a request head's headers are read through `RawHeaderView`: on unless `CODEMUX_HEADER_VIEW=0` (or `false`, `off`). */
export function headerViewOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return !isSwitchedOff(env.CODEMUX_HEADER_VIEW);
}

/**
 * A request's headers as undici's `Headers` reads them, over Node's raw header list: `get` and `has` find a name
 * without regard to case and join repeated headers with ", " (undici's appends cost ~2 µs a request, and the SDK's
 * transport only reads a few); iteration and changes go to a real `Headers` made from the same list on first use.
 */
export class RawHeaderView {
  readonly #raw: readonly string[];
  #real: Headers | undefined;

  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    if (this.#real) return this.#real.get(name);
    const wanted = name.toLowerCase();
    const raw = this.#raw;
    let value: string | null = null;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i] as string;
      if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
      const found = trimmed(raw[i + 1] as string);
      value = value === null ? found : `${value}, ${found}`;
    }
    return value;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  getSetCookie(): string[] {
    return this.#headers().getSetCookie();
  }

  append(name: string, value: string): void {
    this.#headers().append(name, value);
  }

  set(name: string, value: string): void {
    this.#headers().set(name, value);
  }

  delete(name: string): void {
    this.#headers().delete(name);
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#headers().forEach(callback, thisArg);
  }

  entries(): ReturnType<Headers["entries"]> {
    return this.#headers().entries();
  }

  keys(): ReturnType<Headers["keys"]> {
    return this.#headers().keys();
  }

  values(): ReturnType<Headers["values"]> {
    return this.#headers().values();
  }

  [Symbol.iterator](): ReturnType<Headers["entries"]> {
    return this.#headers().entries();
  }

  #headers(): Headers {
    this.#real ??= rawHeaders(this.#raw);
    return this.#real;
  }
}

/** undici's `Headers` of a raw header list, appended in order. */
export function rawHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/** A value as `Headers` keeps it: without leading or trailing HTTP whitespace (tab, space, CR, LF); linear, no regex. */
function trimmed(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isHttpWhitespace(code: number): boolean {
  return code === 0x09 || code === 0x0a || code === 0x0d || code === 0x20;
}
