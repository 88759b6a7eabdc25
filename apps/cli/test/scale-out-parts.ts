import { affinityConfig, recordTasks, startNginx, type Nginx, type RedisServer } from "@codemux/test-servers";
import { Client, fromJsonSchema, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
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

const TASKS = "io.modelcontextprotocol/tasks";
const AnyObject = fromJsonSchema({ type: "object" });

/** A 2026-07-28 client of one instance as `token`'s principal, declaring elicitation and the Tasks extension, with the task methods and the tasks it was given. */
export async function taskClient(url: string, token: string) {
  const client = new Client(
    { name: "tasks", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" }, capabilities: { extensions: { [TASKS]: {} }, elicitation: {} } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  const created = recordTasks(transport);
  const ask = (method: string, params: Record<string, unknown>) => client.request({ method, params } as never, AnyObject) as Promise<Record<string, unknown>>;
  return {
    client,
    created,
    get: (taskId: string) => ask("tasks/get", { taskId }),
    update: (taskId: string, inputResponses: Record<string, unknown>) => ask("tasks/update", { taskId, inputResponses }),
    cancel: (taskId: string) => ask("tasks/cancel", { taskId }),
  };
}
