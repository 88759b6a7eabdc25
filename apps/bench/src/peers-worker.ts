import { parentPort, workerData } from "node:worker_threads";
import { closedLoop, type ClientSpec, type LoopBudget, type Payload } from "./peers-client";

/**
 * A worker thread of the peers section: its share of a block's clients, connected and warmed up, then calling in a closed
 * loop for the block's calls or seconds once told to go. Messages: "warm" when ready, then the loop's result.
 */
const data = workerData as { spec: ClientSpec; clients: number; payload: Payload; warmSeconds: number; prefix: string };
const port = parentPort;
if (port) {
  const loop = await closedLoop(data.spec, data.clients, data);
  port.once("message", async (until: LoopBudget) => {
    const result = await loop.run(until);
    port.postMessage(result);
    await loop.close();
    // Idle sockets of the fetch pool would keep the thread alive; the block waits for it to end.
    process.exit(0);
  });
  port.postMessage("warm");
}
