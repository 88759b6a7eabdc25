import { isSwitchedOff, type Logger } from "@codemux/core";
import { attachFastLane } from "./fast-lane";
import { createSession, type SessionHost } from "./session";
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
}

/**
 * Serves one MCP session over this process's stdin/stdout; resolves when the client disconnects or `signal` aborts.
 *
 * @example
 * const core = new Codemux({ config });
 * core.start();
 * await serveStdio(core);
 * await core.close();
 */
export async function serveStdio(core: SessionHost & { logger: Logger }, streams: ServeStdioOptions = {}): Promise<void> {
  const session = createSession(core);
  const { server } = session;
  const transport = new StdioServerTransport(streams.stdin ?? process.stdin, streams.stdout ?? process.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  server.onerror = (error) => core.logger.debug(`protocol: ${error.message}`);
  await server.connect(transport);
  const lane = (streams.fastLane ?? !isSwitchedOff(process.env.CODEMUX_SERVER_LANE)) ? attachFastLane(session, transport) : undefined;
  if (streams.signal?.aborted) await transport.close();
  streams.signal?.addEventListener("abort", () => void transport.close(), { once: true });
  await closed;
  if (lane) core.logger.debug(`stdio session closed: ${lane.calls} tools/call answered on the fast lane`);
  await server.close().catch(() => undefined);
}
