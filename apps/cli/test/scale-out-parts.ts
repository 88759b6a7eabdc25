import { affinityConfig, startNginx, type Nginx, type RedisServer } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";

/** What a multi-instance suite starts: each part is ended by `endParts`, whichever got started. */
export interface Parts {
  dir?: string;
  redis?: RedisServer;
  nginx?: Nginx;
  started: ChildProcess[];
  clients: Array<{ close(): Promise<void> }>;
  /** More to close before Redis stops (a test's own connection to it). */
  closers?: Array<() => Promise<void>>;
}

/** nginx in front of the instances, routing 2025-era session ids on their instance prefix as the docs say. */
export function startBalancer(instances: Array<{ id: string; url: string }>): Promise<Nginx> {
  return startNginx((port) =>
    affinityConfig(
      instances.map((i) => ({ id: i.id, address: new URL(i.url).host })),
      port,
    ),
  );
}

/** Closes the clients, kills the codemux processes, stops nginx and Redis, and removes the folder. */
export async function endParts(parts: Parts): Promise<void> {
  await Promise.all(parts.clients.map((c) => c.close().catch(() => undefined)));
  for (const child of parts.started) if (child.exitCode === null) child.kill("SIGKILL");
  for (const close of parts.closers ?? []) await close();
  await parts.nginx?.stop();
  await parts.redis?.stop();
  if (parts.dir) await rm(parts.dir, { recursive: true, force: true });
}
