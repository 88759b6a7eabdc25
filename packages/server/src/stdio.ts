import type { Codemux } from "./core";
import { createSessionServer } from "./session";
import { StdioServerTransport } from "./stdio-transport";

/** Serves one MCP session over this process's stdin/stdout; resolves when the client disconnects. */
export async function serveStdio(core: Codemux, streams: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {}): Promise<void> {
  const server = createSessionServer(core);
  const transport = new StdioServerTransport(streams.stdin ?? process.stdin, streams.stdout ?? process.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  server.onerror = (error) => core.logger.debug(`protocol: ${error.message}`);
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
}
