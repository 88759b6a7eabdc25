import { createHash } from "node:crypto";
import type { OAuthDiscoveryState, OAuthTokens, StoredOAuthClientInformation } from "@modelcontextprotocol/client";

/** What codemux keeps per server after `codemux auth login`: kept unchanged as the SDK saved it (it stamps an `issuer`). */
export interface AuthRecord {
  server: string;
  /** The server URL the login was for; a record for another URL is not used. */
  url: string;
  /** A client registered before registrations were kept per issuer (read, never written now). */
  clientInformation?: StoredOAuthClientInformation;
  /** The client codemux is at each authorization server, by its `issuer`: a registration, a metadata document URL or a configured id. */
  clients?: Record<string, StoredOAuthClientInformation>;
  tokens?: OAuthTokens;
  /** The scope the next login asks for (with what the server's challenge names): the last login's, widened by a step-up the server asked for since. */
  scope?: string;
  /** When the access token expires (ISO 8601), from `expires_in` at save time. */
  expiresAt?: string;
  /** When the tokens were last saved (ISO 8601): at login or at a refresh. */
  savedAt?: string;
  discoveryState?: OAuthDiscoveryState;
}

/** `<CODEMUX_HOME or ~/.codemux>/auth`: one file per server, owner-only. */
export async function authDirectory(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { homedir } = await import("node:os");
  const { join } = await import("node:path");
  return join(env.CODEMUX_HOME || join(homedir(), ".codemux"), "auth");
}

/**
 * Where one principal's own files are kept (its logins to servers with per-principal credentials, an isolated server's
 * own folder): a folder under `dir` named by a hash of the principal, so that no principal name, however written,
 * reaches the file system.
 */
export function principalAuthDirectory(dir: string, principal: string): string {
  return `${dir}/principals/${createHash("sha256").update(principal).digest("hex").slice(0, 32)}`;
}

/** Deletes `principal`'s own logins (its folder under `dir`, per-principal credentials), for `codemux forget`; how many servers' logins went. */
export async function deletePrincipalLogins(dir: string, principal: string): Promise<number> {
  const { readdir, rm } = await import("node:fs/promises");
  const folder = principalAuthDirectory(dir, principal);
  const logins = (await readdir(folder).catch(() => [] as string[])).filter((name) => name.endsWith(".json")).length;
  await rm(folder, { recursive: true, force: true });
  return logins;
}

/** The folder a connection's login is in: the shared one, or for a principal's instance of a per-principal server, that principal's own. */
export async function loginDirectory(env: NodeJS.ProcessEnv, principal: string | undefined): Promise<string> {
  const shared = await authDirectory(env);
  return principal === undefined ? shared : principalAuthDirectory(shared, principal);
}

export function fileOf(dir: string, server: string): string {
  // Server names are checked against SERVER_NAME_PATTERN by the config, so they are safe file names; checked again here.
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(server)) throw new Error(`"${server}" is not a valid server name for a login file.`);
  return `${dir}/${server}.json`;
}

/** The stored record of `server`, or undefined when there is none (or it cannot be read as one). */
export async function readAuthRecord(dir: string, server: string): Promise<AuthRecord | undefined> {
  const { readFile } = await import("node:fs/promises");
  let text: string;
  try {
    text = await readFile(fileOf(dir, server), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const record = JSON.parse(text) as AuthRecord;
    return typeof record === "object" && record !== null && typeof record.url === "string" ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the record atomically (a 0600 temporary file renamed over the old one) in a 0700 folder. */
export async function writeAuthRecord(dir: string, record: AuthRecord): Promise<void> {
  const { chmod, mkdir, rename, rm, writeFile } = await import("node:fs/promises");
  const { randomBytes } = await import("node:crypto");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir keeps the mode of a folder that already exists.
  await chmod(dir, 0o700);
  const file = fileOf(dir, record.server);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** True when `server` has a login file (read or not). */
export async function hasAuthRecord(dir: string, server: string): Promise<boolean> {
  const { stat } = await import("node:fs/promises");
  return stat(fileOf(dir, server)).then(
    () => true,
    () => false,
  );
}

/** Deletes the login of `server`; true when there was one. */
export async function deleteAuthRecord(dir: string, server: string): Promise<boolean> {
  const { rm, stat } = await import("node:fs/promises");
  const file = fileOf(dir, server);
  const existed = await stat(file).then(
    () => true,
    () => false,
  );
  await rm(file, { force: true });
  return existed;
}

/** The servers that have a login file. */
export async function listAuthRecords(dir: string): Promise<AuthRecord[]> {
  const { readdir } = await import("node:fs/promises");
  const names = await readdir(dir).catch(() => [] as string[]);
  const records: AuthRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const record = await readAuthRecord(dir, name.slice(0, -".json".length)).catch(() => undefined);
    if (record) records.push(record);
  }
  return records;
}
