import type { InstanceDirectory, SharedStateHealth } from "@codemux/core";

/** Several instances behind one load balancer, sharing state (Redis). */
export interface ScaleOut {
  /** This instance's id: its 2025-era session ids start with `<id>.`, which the load balancer routes on. */
  instanceId: string;
  /** Where the other instances are: a request for a session one of them holds is forwarded there. */
  instances?: InstanceDirectory;
  /** The shared state's health, shown in /readyz's body and /metrics (it never makes the instance unready). */
  state?: SharedStateHealth;
  /** True when kept results live in shared state: a principal's REST and 2026-07-28 calls run as one session on every instance. */
  sharedResults?: boolean;
  /** The instance running `principal`'s unfinished task (job) `taskId`, from its shared record; undefined for a finished, unknown or another principal's task. */
  taskOwner?(principal: string, taskId: string): Promise<string | undefined>;
}
