import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type Progress,
  type ServerContext,
  type ServerNotification,
} from "@modelcontextprotocol/server";
import {
  APPS_EXTENSION,
  SEPARATOR,
  declaresTasks,
  type ClientCapabilities,
  type ClientPeer,
  type ExtensionTask,
  type InputResume,
  type Logger,
  type RequestContext,
  type SessionInfo,
  type Surface,
  type ToolResult,
} from "@codemux/core";
import { rendersApps } from "./apps";
import { LIST_CHANGED_DEBOUNCE_MS } from "./defaults";
import { callParking, type ParkedCalls } from "./park";
import { withRequestMeta } from "./render/request-meta";
import type { TaskStoreFactory } from "./jobs";
import { questionsOf } from "./input-required";
import type { AskingRun, McpFeatures } from "./mcp-features";
import type { RequestStates } from "./signed-state";
import { routeLogMessages } from "./sdk-internals";
import { answerAsTask, serveTaskMethods, taskCapabilities } from "./tasks-extension";
import { inboundSpan } from "./tracing";
import type { ServerSkills } from "./skills/server-skills";
import type { SkillLibrary } from "./skills/library";
import { readSavedSkillFile } from "./skills/saved-entries";
import { serveSkills } from "./skills/upstream";
import { tracing } from "@codemux/pool";
import { VERSION } from "./version";

/**
 * The session port: what an MCP session (stdio, HTTP, SSE, a 2026-07-28 request) needs of a core, and nothing
 * else. The composition makes it (`core.sessions`); `createSessionServer` and `serveStdio` take it.
 */
export interface SessionHost {
  /** The surface of a mode (the core's own when absent). */
  surface(mode?: string): Surface;
  /** A new session of the one local user. */
  session(): SessionInfo;
  /** Milliseconds since the epoch, for when an answer was processed. */
  readonly clock: () => number;
  /** Where protocol errors and the stdio session's close are logged (debug). */
  readonly logger: Logger;
  /** Tells `listener` each time the set of tools changes; returns the call that stops it. */
  onToolsChanged(listener: () => void): () => void;
  /** The catalog cache's load at start (servers' tools and instructions from the last run); sessions made before it resolves miss what it holds. */
  loaded(): Promise<void>;
  /** Resources, prompts, completions and logging of every server, attached to each session; their changes for clients that listen. */
  readonly features: Pick<McpFeatures, "attach" | "onChange">;
  /** Checks the requestState a 2026-07-28 client echoes on a retry (codemux signed it when a downstream server asked). */
  readonly requestStates: RequestStates;
  /** Calls of 2026-07-28 clients parked on a 2025 server's question, until the client's retry answers it. */
  readonly parkedCalls: ParkedCalls;
  /** Each session's tasks (background jobs); without it, task-augmented calls run as plain ones. */
  readonly taskStore: TaskStoreFactory | undefined;
  /** The downstream servers' skills, served to clients of the skills extension. */
  readonly serverSkills: Pick<ServerSkills, "shownEntries" | "shownEntry" | "settled">;
  /** The principals' saved skills, served beside them in mode code. */
  readonly skills: Pick<SkillLibrary, "list">;
}

export interface SessionServerOptions {
  /** Who this client is; a new local session when absent. HTTP serving passes the authenticated principal. */
  session?: SessionInfo;
  /** The mode to serve; the core's when absent. */
  mode?: string;
  /**
   * False when the session outlives this MCP server (stateless HTTP runs a principal's one session over a server per
   * request): its instances of servers isolated per session are then not ended with the server. True when absent.
   */
  endsWithServer?: boolean;
  /**
   * The protocol era this server speaks: `legacy` (2025-11-25 and before: initialize, then the
   * client's capabilities hold for the connection) or `modern` (2026-07-28: each request carries its
   * own capabilities, and a server sends no requests to the client). `legacy` when absent.
   */
  era?: ProtocolEra;
}

/** Milliseconds a 2026-07-28 client may keep a list (filtered per principal) before asking again. */
const LIST_TTL_MS = 10_000;
/** Milliseconds a 2026-07-28 client may keep codemux's discover answer (versions, capabilities, instructions). */
const DISCOVER_TTL_MS = 60_000;
const PRIVATE_LIST = { ttlMs: LIST_TTL_MS, cacheScope: "private" } as const;
const CACHE_HINTS = {
  "tools/list": PRIVATE_LIST,
  "prompts/list": PRIVATE_LIST,
  "resources/list": PRIVATE_LIST,
  "resources/templates/list": PRIVATE_LIST,
  // Private too: its instructions name the servers the principal's policies show, so alice's answer is not bob's.
  "server/discover": { ttlMs: DISCOVER_TTL_MS, cacheScope: "private" },
} as const;

/** A client's protocol era: 2025-11-25 and earlier (`legacy`) or 2026-07-28 (`modern`). */
export type ProtocolEra = "legacy" | "modern";

/**
 * The MCP server of one client session: a thin adapter from MCP requests to the surface of the
 * mode, over the shared core. Nothing mode-specific lives here.
 *
 * @example
 * const server = createSessionServer(core.sessions);
 * await server.connect(new StdioServerTransport(process.stdin, process.stdout));
 */
export function createSessionServer(core: SessionHost, options: SessionServerOptions = {}): Server {
  return createSession(core, options).server;
}

/** What a tools/call handler needs of the request it answers: from the SDK's context, or the stdio fast lane's own. */
export interface SessionCallExtra {
  signal: AbortSignal;
  requestId: string | number;
  sendNotification(notification: ServerNotification): Promise<void>;
  /** The calling client, when it is this request's own (a 2026-07-28 request declares its capabilities itself). */
  peer?: ClientPeer;
  /** The retry of an earlier call that answered input_required (2026-07-28), its state checked. */
  resume?: InputResume;
}

/** One client session: its SDK server, and the tools/call handler it runs, which the stdio fast lane calls too. */
export interface Session {
  server: Server;
  callTool(params: CallToolRequest["params"], extra: SessionCallExtra): Promise<CallToolResult | CreateTaskResult>;
}

/** The session behind `createSessionServer`, with its tools/call handler for the stdio fast lane (see fast-lane.ts). */
export function createSession(core: SessionHost, options: SessionServerOptions = {}): Session {
  const surface = core.surface(options.mode);
  const era = options.era ?? "legacy";
  const who = options.session ?? core.session();
  const instructions = surface.instructions(who);
  let session: SessionInfo | undefined;
  const taskStore = core.taskStore?.({
    surface,
    session: () => session as SessionInfo,
    notify: (task) => void server.notification({ method: "notifications/tasks/status", params: task }).catch(() => undefined),
  });
  const server = new Server(
    { name: "codemux", version: VERSION },
    {
      capabilities: withApps({ tools: { listChanged: true }, ...taskCapabilities(era === "modern", taskStore) }),
      ...(instructions ? { instructions } : {}),
      // Lists are filtered per principal (policies), so no shared cache may keep one; a short TTL since list_changed reaches only listening clients.
      cacheHints: CACHE_HINTS,
    },
  );
  session = { ...who, peer: era === "modern" ? modernPeer(undefined) : clientPeer(server) };
  const current: SessionInfo = session;

  /** The session as one request's client is: on 2026-07-28, with the capabilities that request declares (never an earlier one's). */
  const asRequested = (ctx: ServerContext): SessionInfo => (era === "modern" ? { ...current, peer: modernPeer(envelopeCapabilities(ctx)) } : current);
  /** On 2026-07-28, a request that may ask parks on a 2025 server's question, and passes a 2026 server's up, as a tool call does. */
  const asking: AskingRun = async ({ key, target }, ctx, run) => {
    const parking = {
      parks: core.parkedCalls,
      states: core.requestStates,
      principal: current.principal,
      tool: key,
      ...(target === undefined ? {} : { target }),
      peer: asRequested(ctx).peer as ClientPeer,
      ctx,
    };
    try {
      return await callParking(parking, (own) => run({ ...current, peer: own.peer }, { signal: own.signal, resume: own.resume }));
    } catch (error) {
      const up = questionsOf(error, { principal: current.principal, key, states: core.requestStates });
      if (up) return up;
      throw error;
    }
  };
  // The skills extension (skills/upstream.ts): the skills of the servers this session's policies show, and in mode code
  // the principal's saved skills, which run through execute_code (skills/saved-entries.ts).
  const saved = surface.name === "code" ? core.skills : undefined;
  const forgetFeatures = core.features.attach(server, current, {
    endsSession: options.endsWithServer ?? true,
    ...(era === "modern" ? { requested: asRequested, asking } : {}),
    ...(saved ? { local: (uri: string, who: SessionInfo) => readSavedSkillFile(saved.list(who.principal), uri) } : {}),
  });
  const own = saved ? { saved: (who: SessionInfo) => saved.list(who.principal) } : {};
  serveSkills(server, { skills: core.serverSkills, session: asRequested, modern: era === "modern", ...own });
  // The surface's tools are the protocol's, typed by codemux's own contracts rather than the SDK's.
  server.setRequestHandler("tools/list", async (_request, ctx) => ({ tools: (await surface.listTools(asRequested(ctx))) as never }));
  serveTaskMethods(server, era === "modern", taskStore);

  /** The session as this call's client is (a 2026-07-28 request's own peer, else the connection's). */
  const callerOf = (extra: SessionCallExtra): SessionInfo => (extra.peer ? { ...current, peer: extra.peer } : current);
  const plainAnswer = (params: CallToolRequest["params"], extra: SessionCallExtra): Promise<CallToolResult | CreateTaskResult> => {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    // A task-augmented call (protocol 2025-11-25) runs as a background job and answers with the task at once (SDK v2 wants `content` beside it).
    if (params.task && taskStore)
      return taskStore.createTask({ name: params.name, arguments: args }).then((task) => ({ task, content: [] }) as CreateTaskResult);
    const requestId = String(extra.requestId);
    const ctx: RequestContext = { session: callerOf(extra), origin: "call_tool", signal: extra.signal, requestId };
    if (extra.resume) ctx.resume = extra.resume;
    // A 2026-07-28 request that declared the Tasks extension takes a server's task: codemux's own task follows it, and answers the request.
    let taken: ExtensionTask | undefined;
    const store = era === "modern" ? taskStore?.extension : undefined;
    const capabilities = extra.peer?.capabilities();
    if (store?.followTask && declaresTasks(capabilities)) {
      const follow = store.followTask.bind(store);
      ctx.takeTask = async (run) => {
        taken = await follow({ name: params.name, arguments: args, capabilities, run });
      };
    }
    const startedAt = core.clock();
    const answered = (result: ToolResult) =>
      taken
        ? ({ resultType: "task", ...taken } as unknown as CallToolResult)
        : (withRequestMeta(result, { id: requestId, startedAt, endedAt: core.clock() }) as CallToolResult);
    const token = params._meta?.progressToken;
    // The common call has no progress token: straight to the surface, nothing to wait for after it.
    if (token === undefined) return surface.callTool(params.name, args, ctx).then(answered);
    // Progress is sent as it comes, and the answer waits for those sends: over HTTP a late one would be dropped after the result.
    const sending = new Set<Promise<void>>();
    ctx.progress = (value: Progress) => {
      const sent = extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, ...value } } as ServerNotification)
        .catch(() => undefined);
      sending.add(sent);
      void sent.finally(() => sending.delete(sent));
    };
    return surface.callTool(params.name, args, ctx).then(async (result) => {
      await Promise.all(sending);
      return answered(result);
    });
  };
  // With tracing on, each call is a SERVER span continuing the client's trace (its `_meta`, else the HTTP request's headers).
  const answer = (params: CallToolRequest["params"], extra: SessionCallExtra): Promise<CallToolResult | CreateTaskResult> =>
    tracing()
      ? inboundSpan({ params, requestId: extra.requestId, surface: surface.name, era, principal: current.principal }, () => plainAnswer(params, extra))
      : plainAnswer(params, extra);
  // A name this client is not offered gets the JSON-RPC error both eras' specs ask for, naming only what its tools/list has.
  const callTool: Session["callTool"] = (params, extra) => {
    const go = () =>
      era === "modern" ? (answerAsTask(taskStore?.extension, params, extra.peer?.capabilities()) ?? answer(params, extra)) : answer(params, extra);
    try {
      // An app calls its server's tools by their own names (not listed): the surface answers whether one is its (see apps.ts).
      const appCall = rendersApps(callerOf(extra)) && !params.name.includes(SEPARATOR);
      const checking = appCall ? undefined : offeredNames(core).check(surface, callerOf(extra), params.name);
      // A name in the set remembered for this client starts its call in this turn, not after an async function's turns.
      return checking === undefined ? go() : checking.then(go);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  /** The log of the latest call this server answers (over HTTP a 2026-07-28 server answers exactly one). */
  let requestLog: ServerContext["mcpReq"]["log"] | undefined;
  if (era === "modern") {
    // A server's log line relayed to this session goes on the calling request's stream, and only when it set a logLevel (the SDK's per-request log checks it).
    routeLogMessages(server, ({ level, data, logger }) => requestLog?.(level, data, logger) ?? Promise.resolve());
  }
  server.setRequestHandler("tools/call", (request, ctx) => {
    requestLog = ctx.mcpReq.log;
    const extra: SessionCallExtra = {
      signal: ctx.mcpReq.signal,
      requestId: ctx.mcpReq.id,
      sendNotification: (notification) => ctx.mcpReq.notify(notification),
    };
    if (era !== "modern") return callTool(request.params, extra) as Promise<CallToolResult>;
    // A 2026-07-28 call may park on a 2025 server's question, or be the retry that answers one.
    const parking = {
      parks: core.parkedCalls,
      states: core.requestStates,
      principal: current.principal,
      tool: request.params.name,
      target: request.params.name,
      ctx,
    };
    return callParking(
      { ...parking, peer: asRequested(ctx).peer as ClientPeer },
      (own) => callTool(request.params, { ...extra, ...own }) as Promise<ToolResult>,
    ) as Promise<CallToolResult>;
  });

  let timer: NodeJS.Timeout | undefined;
  const notify = () => {
    // A mode whose list is its meta-tools lists a host that renders apps the tools that show one too, which follow the catalog.
    if (!surface.listChanges && !rendersApps(current)) return;
    clearTimeout(timer);
    timer = setTimeout(() => void server.sendToolListChanged().catch(() => undefined), LIST_CHANGED_DEBOUNCE_MS);
  };
  const stopNotifying = core.onToolsChanged(notify);
  server.onclose = () => {
    clearTimeout(timer);
    stopNotifying();
    forgetFeatures();
  };
  return { server, callTool };
}

/** Offered-name sets kept past this many (callers times their capability sets) start afresh: a client's capabilities are its own text. */
const MAX_OFFERED_SETS = 1000;
/** Capabilities whose JSON is longer are not remembered by (the check lists the tools each call, as before). */
const MAX_CAPABILITIES_KEY = 4096;

/**
 * The names each caller of one core is offered, per surface, as sets: the unknown-name check of a call is a lookup,
 * not a tools/list. A set is what `surface.listTools` answered that caller (its principal, claims and client
 * capabilities decide it), and every set is forgotten when the core's tools or policies change (`toolsChanged`). Shared
 * by the core's sessions: over HTTP a 2026-07-28 request, or a stateless one, gets a session of its own.
 */
class OfferedNames {
  /** Per surface, by `offeredKey`. */
  #sets = new WeakMap<Surface, Map<string, ReadonlySet<string>>>();
  /** Bumped on every change: a list made before one is not remembered after it. */
  #generation = 0;

  constructor(core: SessionHost) {
    core.onToolsChanged(() => {
      this.#generation++;
      this.#sets = new WeakMap();
    });
  }

  /**
   * Rejects with the unknown-tool error unless `session`'s client is offered `name` by `surface`; undefined
   * (no promise to wait on) when the set remembered for this client has the name.
   */
  check(surface: Surface, session: SessionInfo, name: string): Promise<void> | undefined {
    const key = offeredKey(session);
    if (key !== undefined && this.#sets.get(surface)?.get(key)?.has(name)) return undefined;
    return this.#checkListed(surface, session, name);
  }

  /** Not in the set (or none yet): the list as it is now decides, and names what is offered when refused. */
  async #checkListed(surface: Surface, session: SessionInfo, name: string): Promise<void> {
    const key = offeredKey(session);
    const generation = this.#generation;
    const offered = (await surface.listTools(session)).map((tool) => tool.name);
    if (key !== undefined && generation === this.#generation) {
      let sets = this.#sets.get(surface);
      if (!sets) this.#sets.set(surface, (sets = new Map()));
      if (sets.size >= MAX_OFFERED_SETS) sets.clear();
      sets.set(key, new Set(offered));
    }
    if (!offered.includes(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, unknownTool(name, offered));
  }
}

const offeredByCore = new WeakMap<SessionHost, OfferedNames>();
function offeredNames(core: SessionHost): OfferedNames {
  let names = offeredByCore.get(core);
  if (!names) offeredByCore.set(core, (names = new OfferedNames(core)));
  return names;
}

/** Each capabilities object's JSON, made once (a 2025 connection's object is the same on every call). */
const capabilitiesJson = new WeakMap<object, string>();

/** What a surface's tool list depends on: the caller's session, principal and claims (its policy grant), and its client's capabilities. */
function offeredKey(session: SessionInfo): string | undefined {
  const capabilities = session.peer?.capabilities();
  let json = capabilities ? capabilitiesJson.get(capabilities) : "";
  if (json === undefined) {
    json = JSON.stringify(capabilities);
    capabilitiesJson.set(capabilities as object, json);
  }
  if (json.length > MAX_CAPABILITIES_KEY) return undefined;
  return [session.id, session.principal, session.groups?.join("\u0001") ?? "", session.scopes?.join("\u0001") ?? "", json].join("\u0000");
}

/** A session's capabilities with the Apps extension declared: codemux carries MCP Apps in every mode (see apps.ts). */
function withApps(capabilities: Record<string, unknown>): Record<string, unknown> {
  const extensions = (capabilities.extensions ?? {}) as Record<string, unknown>;
  return { ...capabilities, extensions: { ...extensions, [APPS_EXTENSION]: {} } };
}

/** Requests to this session's client, through the SDK server (which checks the client declared each capability). */
function clientPeer(server: Server): ClientPeer {
  return {
    era: "legacy",
    capabilities: () => server.getClientCapabilities(),
    // The server's own request, relayed as it came: the SDK validates it on the way out.
    elicit: (params, options) => server.elicitInput(params as never, options?.signal ? { signal: options.signal } : undefined),
    createMessage: (params, options) => server.createMessage(params as never, options?.signal ? { signal: options.signal } : undefined),
    listRoots: (options) => server.listRoots(undefined, options?.signal ? { signal: options.signal } : undefined),
  };
}

/** The capabilities a 2026-07-28 request declares in its `_meta` envelope (the SDK lifts them out of the params). */
function envelopeCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/**
 * The client of one 2026-07-28 request: the capabilities that request declared, never an earlier
 * one's. The revision has no server-to-client requests, so a question cannot be pushed to it.
 */
function modernPeer(capabilities: ClientCapabilities | undefined): ClientPeer {
  const refuse = (method: string) =>
    Promise.reject(
      new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `codemux cannot send ${method} to this client: it speaks MCP 2026-07-28, where a server sends no requests to its client.`,
      ),
    );
  return {
    era: "modern",
    capabilities: () => capabilities,
    elicit: () => refuse("elicitation/create"),
    createMessage: () => refuse("sampling/createMessage"),
    listRoots: () => refuse("roots/list"),
  };
}

/** The error for a name the client was not offered: what it was offered (20 names at most), and how a downstream tool is reached. */
function unknownTool(name: string, offered: string[]): string {
  const shown = offered.length > 20 ? `${offered.slice(0, 20).join(", ")} and ${offered.length - 20} more` : offered.join(", ");
  const through = ["call_tool", "execute_code"].filter((tool) => offered.includes(tool));
  return `Unknown tool "${name.slice(0, 200)}": this client is offered ${shown || "no tools"}${
    through.length ? `; a downstream tool is called through ${through.join(" or ")}` : ""
  }.`;
}
