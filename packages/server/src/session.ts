import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Progress, type ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { Codemux } from "./core";
import { LIST_CHANGED_DEBOUNCE_MS } from "./defaults";
import type { ClientPeer, SessionInfo } from "./pipeline/context";
import { VERSION } from "./version";

export interface SessionServerOptions {
  /** Who this client is; a new local session when absent. HTTP serving passes the authenticated principal. */
  session?: SessionInfo;
  /** The mode to serve; the core's when absent. */
  mode?: string;
}

/**
 * The MCP server of one client session: a thin adapter from MCP requests to the surface of the
 * mode, over the shared core. Nothing mode-specific lives here.
 *
 * @example
 * const server = createSessionServer(core);
 * await server.connect(new StdioServerTransport(process.stdin, process.stdout));
 */
export function createSessionServer(core: Codemux, options: SessionServerOptions = {}): Server {
  const surface = core.surface(options.mode);
  const instructions = surface.instructions();
  let session: SessionInfo | undefined;
  const taskStore = core.options.taskStore?.({
    session: () => session as SessionInfo,
    notify: (task) => void server.notification({ method: "notifications/tasks/status", params: task }).catch(() => undefined),
  });
  const server = new Server(
    { name: "codemux", version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, ...(taskStore ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}) },
      ...(taskStore ? { taskStore } : {}),
      ...(instructions ? { instructions } : {}),
    },
  );
  session = { ...(options.session ?? core.session()), peer: clientPeer(server) };
  const current: SessionInfo = session;
  const forgetRelay = core.relay.register(current);
  const forgetFeatures = core.features.attach(server, current);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await surface.listTools(current) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // A task-augmented call (protocol 2025-11-25) runs as a background job and answers with the task at once.
    if (request.params.task && extra.taskStore) return { task: await extra.taskStore.createTask({ ttl: request.params.task.ttl }) };
    const token = request.params._meta?.progressToken;
    // Progress is sent as it comes, and the answer waits for those sends: over HTTP a late one would be dropped after the result.
    const sending = new Set<Promise<void>>();
    const progress =
      token === undefined
        ? undefined
        : (value: Progress) => {
            const sent = extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...value } } as ServerNotification).catch(() => undefined);
            sending.add(sent);
            void sent.finally(() => sending.delete(sent));
          };
    const result = await surface.callTool(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, {
      core,
      session: current,
      origin: "call_tool",
      signal: extra.signal,
      requestId: String(extra.requestId),
      ...(progress ? { progress } : {}),
    });
    await Promise.all(sending);
    return result;
  });

  let timer: NodeJS.Timeout | undefined;
  const notify = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void server.sendToolListChanged().catch(() => undefined), LIST_CHANGED_DEBOUNCE_MS);
  };
  if (surface.listChanges) core.on("toolsChanged", notify);
  server.onclose = () => {
    clearTimeout(timer);
    core.off("toolsChanged", notify);
    forgetRelay();
    forgetFeatures();
  };
  return server;
}

/** Requests to this session's client, through the SDK server (which checks the client declared each capability). */
function clientPeer(server: Server): ClientPeer {
  return {
    capabilities: () => server.getClientCapabilities(),
    elicit: (params, options) => server.elicitInput(params, options?.signal ? { signal: options.signal } : undefined),
    createMessage: (params, options) => server.createMessage(params, options?.signal ? { signal: options.signal } : undefined),
    listRoots: (options) => server.listRoots(undefined, options?.signal ? { signal: options.signal } : undefined),
  };
}
