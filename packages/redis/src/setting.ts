import { RedisUrlError } from "./errors";

/** Where shared state lives: files (one instance, the default) or a Redis server. */
export type StoreSetting = { kind: "files" } | { kind: "redis"; url: string; prefix: string };

/** Keys of one deployment start with this, so several deployments can share one Redis. */
export const DEFAULT_PREFIX = "codemux:";

const PREFIX_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Reads the `store` setting: `files`, or a `redis://` / `rediss://` (TLS) URL with optional user, password
 * and database (`redis://:secret@10.0.0.9:6379/2`); `?prefix=team-a:` in the URL or `prefix` names the key namespace.
 */
export function parseStoreSetting(value: string | undefined, prefix?: string): StoreSetting {
  const text = value?.trim() ?? "";
  if (text === "" || text === "files") return { kind: "files" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RedisUrlError(`The store "${text.slice(0, 100)}" is neither "files" nor a URL; give files or redis://HOST:PORT (rediss:// for TLS).`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    throw new RedisUrlError(`The store ${redactUrl(text)} is not a redis:// or rediss:// URL; give files or redis://HOST:PORT.`);
  const fromUrl = url.searchParams.get("prefix") ?? undefined;
  const chosen = prefix ?? fromUrl ?? DEFAULT_PREFIX;
  if (!PREFIX_PATTERN.test(chosen))
    throw new RedisUrlError(`The store prefix "${chosen.slice(0, 80)}" may hold letters, digits, ".", "_", ":" and "-" (1 to 64), e.g. codemux:.`);
  url.searchParams.delete("prefix");
  return { kind: "redis", url: url.toString(), prefix: chosen };
}

/** The URL without its user and password, for logs, errors, /readyz. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    url.username = "";
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "(not a URL)";
  }
}
