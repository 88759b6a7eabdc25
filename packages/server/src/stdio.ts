import type { Transport } from "@modelcontextprotocol/server";
import { serveStdio as serveBothEras } from "@modelcontextprotocol/server/stdio";
import { serverLaneOn } from "./connect";
import { attachFastLane, type FastLane } from "./fast-lane";
import { createSession, type ProtocolEra, type SessionHost } from "./session";
import { StdioServerTransport } from "./stdio-transport";

export interface ServeStdioOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Ends the session (a signal to stop, such as SIGTERM). */
  signal?: AbortSignal;
  /**
   * Answer plain tools/call requests on the fast lane (same answers, without the SDK Server's parsing);
   * true unless the environment says `CODEMUX_SERVER_LANE=0` (or `false`, `off`: every request then takes the SDK's path).
   */
  fastLane?: boolean;
  /**
   * Called once, before the first request that is not `server/discover`: where the caller starts what
   * serving needs (the servers, the jobs journal). A 2026-07-28 client probes a stdio server by
   * starting a throw-away copy that is asked `server/discover` only, then ended at once; that copy
   * must answer from the config and start nothing.
   */
  onFirstRequest?: () => void;
}

/**
 * Serves one MCP client over this process's stdin/stdout, in either protocol era: the client's first
 * message decides (an `initialize` is a 2025-era client, a request carrying the 2026-07-28 `_meta`
 * envelope a modern one). Resolves when the client disconnects or `signal` aborts.
 *
 * @example
 * const core = new Codemux({ config });
 * await serveStdio(core.sessions, { onFirstRequest: () => core.start() });
 * await core.close();
 */
export async function serveStdio(core: SessionHost, streams: ServeStdioOptions = {}): Promise<void> {
  const wire = new StdioServerTransport(streams.stdin ?? process.stdin, streams.stdout ?? process.stdout);
  const useLane = serverLaneOn(streams.fastLane);
  const lanes: FastLane[] = [];
  const served = serveBothEras(
    async ({ era }) => {
      // The instructions a client reads at its first exchange include what the servers said last run (the catalog cache).
      await core.loaded();
      const session = createSession(core, { era: era as ProtocolEra });
      const { server } = session;
      server.onerror = (error) => core.logger.debug(`protocol: ${error.message}`);
      // The 2025-era fast lane takes plain calls off the wire itself, ahead of the SDK's queue and channel, once this server is connected.
      if (useLane && era === "legacy") {
        const connect = server.connect.bind(server);
        server.connect = async (channel: Transport) => {
          await connect(channel);
          lanes.push(attachFastLane(session, wire));
        };
      }
      return server;
    },
    { legacy: "serve", transport: wire, onerror: (error) => core.logger.debug(`protocol: ${error.message}`) },
  );
  const closed = new Promise<void>((resolve) => {
    const sdkClose = wire.onclose;
    wire.onclose = () => {
      sdkClose?.();
      resolve();
    };
  });
  if (streams.onFirstRequest) {
    const begin = streams.onFirstRequest;
    const sdkMessage = wire.onmessage;
    let begun = false;
    wire.onmessage = (message) => {
      const method = (message as { method?: unknown; id?: unknown }).method;
      if (!begun && typeof method === "string" && "id" in message && method !== "server/discover") {
        begun = true;
        begin();
      }
      sdkMessage?.(message);
    };
  }
  if (streams.signal?.aborted) await served.close();
  streams.signal?.addEventListener("abort", () => void served.close(), { once: true });
  await closed;
  const calls = lanes.reduce((sum, lane) => sum + lane.calls, 0);
  if (lanes.length > 0) core.logger.debug(`stdio session closed: ${calls} tools/call answered on the fast lane`);
  await served.close().catch(() => undefined);
}
