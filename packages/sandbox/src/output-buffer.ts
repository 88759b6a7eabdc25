import { MIB } from "./defaults.js";

/** Console output capped at a number of UTF-8 bytes; what does not fit is dropped and marked. */
export class OutputBuffer {
  readonly #limit: number;
  readonly #chunks: string[] = [];
  #bytes = 0;
  #truncated = false;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  get truncated(): boolean {
    return this.#truncated;
  }

  get remaining(): number {
    return this.#truncated ? 0 : this.#limit - this.#bytes;
  }

  /** Returns the bytes still accepted afterwards. */
  write(text: string): number {
    if (this.#truncated) return 0;
    const bytes = Buffer.byteLength(text);
    if (bytes <= this.#limit - this.#bytes) {
      this.#chunks.push(text);
      this.#bytes += bytes;
      return this.remaining;
    }
    this.#chunks.push(utf8Prefix(text, this.#limit - this.#bytes));
    this.#bytes = this.#limit;
    this.#truncated = true;
    return 0;
  }

  text(): string {
    const text = this.#chunks.join("");
    return this.#truncated ? `${text}\n[output truncated at ${formatBytes(this.#limit)}]` : text;
  }
}

/** The longest prefix of `text` that fits in `bytes` UTF-8 bytes without splitting a character. */
function utf8Prefix(text: string, bytes: number): string {
  const encoded = Buffer.from(text);
  let end = Math.max(0, bytes);
  while (end > 0 && end < encoded.length && ((encoded[end] ?? 0) & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString("utf8");
}

export function formatBytes(bytes: number): string {
  if (bytes >= MIB && bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
