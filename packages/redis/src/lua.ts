import { createHash } from "node:crypto";

/** A Lua script with its SHA-1, as `RedisConnection.script` runs it (by hash, its text sent only when Redis lacks it). */
export interface LuaScript {
  text: string;
  sha: string;
}

export function luaScript(text: string): LuaScript {
  return { text, sha: createHash("sha1").update(text).digest("hex") };
}

/** The part of a key that names an owner (a principal): a hash of it, so that any text is safe, never a pattern or a separator. */
export function ownerHash(owner: string): string {
  return createHash("sha256").update(owner).digest("hex").slice(0, 32);
}
