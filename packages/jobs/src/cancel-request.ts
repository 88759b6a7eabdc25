import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { journalPaths } from "./journal";

/**
 * Asks the codemux process that runs a job to cancel it: a file under `<dir>/cancel/` that the
 * owner polls each second while it runs jobs (how `codemux jobs cancel` reaches a serving codemux).
 */
export async function requestCancel(dir: string, id: string, by = "cli"): Promise<void> {
  if (!/^job_[0-9a-f]{6,32}$/.test(id)) throw new Error(`"${id.slice(0, 60)}" is not a job id (job_ and hex digits).`);
  const { cancel } = journalPaths(dir);
  await mkdir(cancel, { recursive: true, mode: 0o700 });
  await writeFile(join(cancel, id), JSON.stringify({ by, ts: Date.now() }), { mode: 0o600 });
}
