import {
  APP_MIME_TYPE,
  type CallOrigin,
  type InputResume,
  type Logger,
  SEPARATOR,
  type SecretMask,
  type SessionInfo,
  splitQualifiedName,
  withoutServerInfo,
} from "@codemux/core";
import {
  ProtocolError,
  ProtocolErrorCode,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptRequest,
  type GetPromptResult,
  type LoggingLevel,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  type Server,
  type ServerContext,
  type ServerNotification,
  UriTemplate,
} from "@modelcontextprotocol/server";
import type { Catalog } from "@codemux/catalog";
import { SKILLS_EXTENSION_ID } from "@modelcontextprotocol/server/ext/skills";
import { AuthRequiredError, type InstanceOwner } from "@codemux/pool";
import { isAppUri, isServerSchemeUri, isSkillUri, serverUriOwner, shownServerUri } from "./app-uris";
import { maskedError } from "./downstream-mask";
import { InputRequiredError } from "./errors";
import type { PipelineRequest, ToolCallPipeline } from "./pipeline/pipeline";
import type { Access } from "./policy/access";
import type { Readiness } from "./readiness";
import type { ClientRelay } from "./relay";
import { ResourceSubscriptions } from "./resource-subscriptions";
import type { ResultStore } from "./results";
import { heldSkillFileReason, type ItemKind, type ToolScreen } from "./screen";
import type { ToolPool } from "./tool-pool";

/** Where a URI that two servers both list is made unambiguous: `codemux://<server>/<the server's own URI>`, reversible by its prefix. */
const COLLISION_SCHEME = "codemux://";
const MAX_PAGES = 20;
/** SDK v2's client caches lists a server marks cacheable: codemux asks when it needs a fresh answer (a list_changed, a client's request), so it never takes one from that cache. */
const FRESH = { cacheMode: "bypass" } as const;
/** Resources, templates and prompts of one server put in search, at most. */
const INDEXED = 500;
const LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * The MCP surface beyond tools, aggregated over every server: resources (list, templates, read,
 * subscribe), prompts under `server__prompt` names, argument completion, and the servers' log
 * messages, for every client session of one core, in any mode.
 */
/** What the features need of codemux: the servers, the catalog (to index resources and prompts), the pipeline (resource reads go through it), the relay (whose log lines are whose) and where large contents are kept. */
export interface McpFeaturesOptions {
  pool: ToolPool;
  catalog: Catalog;
  /** Which servers' resources and prompts each session sees (the config's policies). */
  access: Access;
  readiness: Readiness;
  pipeline: ToolCallPipeline;
  relay: ClientRelay;
  results: ResultStore;
  largeResultBytes: number;
  logger: Logger;
  /** Masks what servers send here (prompts, completions, log lines, list descriptions, their errors); resource reads pass the pipeline's middleware instead. */
  mask: SecretMask;
  /** The scan (security.scan) of resources, templates and prompts as tools are scanned: hidden characters removed, flagged ones held back. */
  screen?: ToolScreen | undefined;
}

/** What one run of a request that may ask is given: the signal that ends it, and a client's retry's answers. */
export interface AskingOwn {
  signal: AbortSignal;
  resume?: InputResume | undefined;
}

/**
 * Runs one request that a downstream server may ask a question during, which the client answers on a
 * retry (`prompts/get`, `resources/read`, named by `key`; `target`, when known, is the downstream name a
 * retry without requestState answers): `run` makes it for `caller` (a 2026-07-28 request's own client)
 * with `own`. Its answer may be `input_required`.
 */
export type AskingRun = <R extends Record<string, unknown>>(
  request: { key: string; target?: string },
  ctx: ServerContext,
  run: (caller: SessionInfo, own: AskingOwn) => Promise<R>,
) => Promise<R | Record<string, unknown>>;

/** How a session's requests reach its client, for `attach`. */
export interface FeatureAttachOptions {
  /** False when the session outlives this server (stateless HTTP): its instances are not ended with it. True when absent. */
  endsSession?: boolean;
  /** The session as one request's client is (a 2026-07-28 request declares its own capabilities); the session when absent. */
  requested?: (ctx: ServerContext) => SessionInfo;
  /** How a request that may ask runs (a 2026-07-28 session's parks, and answers `input_required`); at once for the session when absent. */
  asking?: AskingRun;
  /** Resources codemux answers itself (its saved skills' files, skills/saved-entries.ts): undefined for any other URI. */
  local?: (uri: string, session: SessionInfo) => ReadResourceResult | undefined;
}

/** A change a downstream server reported: its resources or prompts list, or one resource (by the URI clients are shown). */
export type FeatureChange = { kind: "resources" } | { kind: "prompts" } | { kind: "resource"; uri: string };

export class McpFeatures {
  /** URI as shown to clients -> the server and the URI it knows. */
  readonly #uris = new Map<string, { server: string; uri: string }>();
  /** Each session's resource subscriptions, counted per downstream resource: the last one's unsubscribe goes down. */
  readonly #subscriptions: ResourceSubscriptions;
  readonly #levels = new Map<string, LoggingLevel>();
  /** Each session's servers whose app (a ui:// resource) its host has read: the servers its apps' calls may mean. */
  readonly #appsRead = new Map<string, Set<string>>();
  readonly #servers = new Map<string, Server>();
  /** The session each of `#servers` serves (an instance's notifications go to its owner's). */
  readonly #sessions = new Map<string, SessionInfo>();
  /** Told of every change a downstream server reported, once (not per session): front ends whose servers cannot push (2026-07-28 over HTTP) publish them to listeners. */
  readonly #changeListeners = new Set<(change: FeatureChange, owner?: InstanceOwner) => void>();

  readonly #deps: McpFeaturesOptions;

  constructor(deps: McpFeaturesOptions) {
    this.#deps = deps;
    const { pool } = deps;
    this.#subscriptions = new ResourceSubscriptions({ client: async ({ server, instance }) => pool.client?.(server, instance?.session), logger: deps.logger });
    pool.on("notification", (server, notification, owner) => {
      // An instance's log lines, resource updates and list changes go to its owner's sessions alone (its state is theirs).
      if (owner) {
        if (notification.method === "notifications/message") this.#relayLogMessage(server, notification.params ?? {}, owner);
        else this.#relayNotification(server, notification, owner);
        return;
      }
      this.#relayNotification(server, notification);
      if (notification.method.endsWith("/list_changed")) void this.#indexServer(server);
    });
    // search_tools finds resources and prompts too, marked by kind, as each server connects.
    pool.on("tools", (server) => void this.#indexServer(server));
    pool.on("removed", (server) => this.#unindex(server));
  }

  /** Puts one server's resources, templates and prompts (at most INDEXED each) in the catalog's search, replacing what it had there. */
  async #indexServer(server: string): Promise<void> {
    if (!this.#deps.pool.client) return;
    let client: Awaited<ReturnType<NonNullable<ToolPool["client"]>>>;
    try {
      // A server with per-principal credentials refuses: its listing connection is the operator's, and lists tools only.
      client = await this.#deps.pool.client(server);
    } catch {
      return;
    }
    const capabilities = client.getServerCapabilities() ?? {};
    let [resources, templates, prompts] = await Promise.all([
      capabilities.resources
        ? client.listResources(undefined, FRESH).then(
            (r) => r.resources,
            () => [],
          )
        : [],
      capabilities.resources
        ? client.listResourceTemplates(undefined, FRESH).then(
            (r) => r.resourceTemplates,
            () => [],
          )
        : [],
      capabilities.prompts
        ? client.listPrompts(undefined, FRESH).then(
            (r) => r.prompts,
            () => [],
          )
        : [],
    ]);
    this.#unindex(server);
    resources = this.#screened("resources", { server, items: resources });
    templates = this.#screened("resourceTemplates", { server, items: templates });
    prompts = this.#screened("prompts", { server, items: prompts });
    const add = (
      kind: "resource" | "prompt",
      key: string,
      fields: { name: string; shown: string; signature: string; description?: string | undefined; module: string },
    ) => {
      const description = fields.description ?? "";
      this.#deps.catalog.setDocument({
        id: `${server}:${key}`,
        kind,
        qualifiedName: fields.shown,
        server,
        name: fields.name,
        functionName: kind === "resource" ? "readResource" : fields.name,
        moduleSpecifier: fields.module,
        signature: fields.signature,
        summary: description.split(/(?<=\.)\s/)[0]?.slice(0, 200) ?? "",
        tool: { name: fields.name, description: `${fields.name} ${description}`, inputSchema: { type: "object" } },
      });
    };
    // A server's skills are found as skills (mcp/server-skills/), not a second time as their SKILL.md resources.
    const skillFiles = (capabilities as { extensions?: Record<string, unknown> }).extensions?.[SKILLS_EXTENSION_ID] !== undefined;
    for (const r of resources.slice(0, INDEXED).filter((r) => !(skillFiles && r.uri.endsWith("/SKILL.md"))))
      add("resource", r.uri, {
        name: r.name,
        shown: shownServerUri(server, r.uri),
        signature: `readResource(${JSON.stringify(shownServerUri(server, r.uri))})`,
        description: r.description,
        module: "mcp/resources",
      });
    for (const t of templates.slice(0, INDEXED))
      add("resource", t.uriTemplate, {
        name: t.name,
        shown: t.uriTemplate,
        signature: `readResource(${JSON.stringify(t.uriTemplate)}) with the {variables} filled in`,
        description: t.description,
        module: "mcp/resources",
      });
    for (const p of prompts.slice(0, INDEXED))
      add("prompt", p.name, {
        name: p.name,
        shown: `${server}${SEPARATOR}${p.name}`,
        signature: `prompts/get ${server}${SEPARATOR}${p.name}(${(p.arguments ?? []).map((a) => `${a.name}${a.required ? "" : "?"}`).join(", ")})`,
        description: p.description,
        module: "(prompt)",
      });
  }

  #unindex(server: string): void {
    for (const doc of this.#deps.catalog.documents()) {
      if ((doc.kind === "resource" || doc.kind === "prompt") && doc.server === server) this.#deps.catalog.removeDocument(doc.kind, doc.id);
    }
  }

  /** Adds the handlers to one session's MCP server and forgets the session when it closes (ending its own instances too, with `endsSession`). */
  attach(server: Server, session: SessionInfo, options: FeatureAttachOptions = {}): () => void {
    const { endsSession = true, requested = () => session, asking = (_request, ctx, run) => run(session, { signal: ctx.mcpReq.signal }) } = options;
    this.#servers.set(session.id, server);
    this.#sessions.set(session.id, session);
    const detachRelay = this.#deps.relay.attach(session);
    server.registerCapabilities({ resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {}, logging: {} });
    server.setRequestHandler("resources/list", async () => ({ resources: await this.listResources(session) }));
    server.setRequestHandler("resources/templates/list", async () => ({ resourceTemplates: await this.listResourceTemplates(session) }));
    server.setRequestHandler("resources/read", (request, ctx) => {
      // codemux's own resources (its saved skills' files) are answered here, never sent to a server.
      const local = options.local?.(request.params.uri, requested(ctx));
      if (local) return Promise.resolve(local);
      return asking({ key: `resources/read ${request.params.uri}` }, ctx, (caller, own) =>
        this.readResource(request.params.uri, { session: caller, origin: "resources/read", ...own }),
      ) as Promise<ReadResourceResult>;
    });
    server.setRequestHandler("resources/subscribe", async (request) => {
      const owner = await this.#owner(request.params.uri, session);
      // A subscription is held on one connection for every session: such a server's resources are each principal's own.
      if (this.#actsAsPrincipal().has(owner.server))
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `The resources of "${owner.server}" are each principal's own, so codemux does not subscribe to them; read the resource again to see a change.`,
        );
      // An isolated server's resource changes in its owner's instance: the subscription is held there.
      const isolation = this.#deps.readiness.status().find((s) => s.name === owner.server)?.isolation;
      const instance = isolation && { session, key: isolation === "session" ? session.id : session.principal, perSession: isolation === "session" };
      await this.#subscriptions.subscribe(session.id, request.params.uri, instance ? { ...owner, instance } : owner);
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", async (request) => {
      await this.#subscriptions.unsubscribe(session.id, request.params.uri);
      return {};
    });
    server.setRequestHandler("prompts/list", async () => ({ prompts: await this.listPrompts(session) }));
    server.setRequestHandler(
      "prompts/get",
      (request, ctx) =>
        asking({ key: `prompts/get ${request.params.name}`, target: request.params.name }, ctx, (caller, own) =>
          this.getPrompt(request.params, { session: caller, ...own }),
        ) as Promise<GetPromptResult>,
    );
    server.setRequestHandler("completion/complete", async (request, ctx) =>
      this.complete(request.params, { session: requested(ctx), signal: ctx.mcpReq.signal }),
    );
    server.setRequestHandler("logging/setLevel", async (request) => {
      this.#levels.set(session.id, request.params.level);
      return {};
    });
    // A client's notifications/roots/list_changed reaches only its own instances of isolated servers: shared servers take their roots from the config (see ClientRelay).
    server.setNotificationHandler("notifications/roots/list_changed", async () => this.#deps.pool.rootsChanged?.(session));
    return () => {
      // Requests that share one session (2026-07-28, --stateless) each attach a server: one that ends leaves a later one's entry be.
      if (this.#servers.get(session.id) === server) {
        this.#servers.delete(session.id);
        this.#sessions.delete(session.id);
      }
      this.#levels.delete(session.id);
      detachRelay();
      if (!endsSession) return;
      this.#appsRead.delete(session.id);
      // Subscriptions are the session's, not one request's: a stateless request that ends leaves them held.
      void this.#subscriptions.release(session.id);
      // What the session owned downstream ends with it: its instances of servers isolated per session.
      void this.#deps.pool
        .closeSession?.(session.id)
        .catch((error: unknown) => this.#deps.logger.warn(`while ending a session's servers: ${(error as Error).message}`));
    };
  }

  /**
   * Every server's resources that `session` sees; a URI two servers share is shown under `codemux://<server>/`, and so
   * is every resource of a server with per-principal credentials (it is the session's own: listed by its instance).
   */
  async listResources(session?: SessionInfo): Promise<Resource[]> {
    const listed = await this.#gather(
      "resources",
      async (client) => {
        const all: Resource[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const result = await client.listResources(cursor ? { cursor } : undefined, FRESH);
          all.push(...result.resources);
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        return all;
      },
      { session, everyShared: true },
    ).then((lists) => lists.map((l) => ({ ...l, items: this.#screened("resources", l) })));
    const counts = new Map<string, number>();
    for (const { items, own } of listed) if (!own) for (const r of items) counts.set(r.uri, (counts.get(r.uri) ?? 0) + 1);
    // An app's ui:// URI and a skill's skill:// URI are always shown under their server (ui://<server>/...): tools' _meta.ui and skills/list say the same.
    const shownUri = (server: string, uri: string, own: boolean) =>
      isServerSchemeUri(uri) ? shownServerUri(server, uri) : own || (counts.get(uri) ?? 0) > 1 ? `${COLLISION_SCHEME}${server}/${uri}` : uri;
    const out: Resource[] = [];
    for (const { server, items, own, needsLogin } of listed) {
      if (needsLogin !== undefined)
        out.push({ uri: `${COLLISION_SCHEME}${server}/`, name: `${server}: log in to see its resources`, description: this.#described(server, needsLogin) });
      // Names are made over every shared server, so that a URI means the same resource to every session.
      const seen = own || this.#sees(session, server);
      for (const resource of items) {
        const shown = shownUri(server, resource.uri, own === true);
        if (!own) this.#uris.set(shown, { server, uri: resource.uri });
        if (seen) out.push({ ...resource, uri: shown, description: this.#described(server, resource.description) });
      }
    }
    return out;
  }

  async listResourceTemplates(session?: SessionInfo): Promise<ResourceTemplate[]> {
    const listed = await this.#templates(session);
    return listed.flatMap(({ server, items }) =>
      items.map((t) => ({ ...t, uriTemplate: shownServerUri(server, t.uriTemplate), description: this.#described(server, t.description) })),
    );
  }

  /**
   * One resource, from its owner, through the call pipeline (the plugins see every read); large text
   * contents are kept and previewed like large tool results.
   */
  async readResource(
    uri: string,
    caller: { session: SessionInfo; origin: CallOrigin; signal?: AbortSignal; resume?: InputResume | undefined },
  ): Promise<ReadResourceResult> {
    const { session } = caller;
    const owner = await this.#owner(uri, session);
    if (await this.#held({ server: owner.server, kind: "resources", id: owner.uri }, session)) throw unknownResource(uri);
    const read = await this.#deps.pipeline.readResource({ server: owner.server, uri: owner.uri, ...caller });
    const result = isSkillUri(uri) ? this.#screenedSkillFile(owner, read) : read;
    if (isAppUri(uri) && caller.origin === "resources/read") this.#appsRead.set(session.id, (this.#appsRead.get(session.id) ?? new Set()).add(owner.server));
    const contents = await Promise.all(
      result.contents.map(async (content) => {
        // An app's HTML goes to the host whole (its mimeType and _meta.ui as the server gave them): a preview would be no app.
        if (!("text" in content) || content.text.length <= this.#deps.largeResultBytes || content.mimeType === APP_MIME_TYPE) return { ...content, uri };
        // A client's read of a skill file gets it whole: it checks the bytes against the file's listed digest.
        if (isSkillUri(uri) && caller.origin === "resources/read") return { ...content, uri };
        const kept = await this.#deps.results.keep(`resource ${uri}`, content.text, session);
        const preview = content.text.slice(0, 2000);
        return { ...content, uri, text: `${preview}\n[resource of ${kept.bytes} bytes kept as "${kept.handle}"; read_result pages through it]` };
      }),
    );
    return { ...withoutServerInfo(result), contents };
  }

  /**
   * A skill file read as a resource (a Skills-extension client reads them so) as the scan lets it through, as read_module
   * shows one: held under quarantine (an error naming the approval), hidden characters gone (a client then finds the
   * bytes do not match the listed digest, and the file unverified).
   */
  #screenedSkillFile(owner: { server: string; uri: string }, result: ReadResourceResult): ReadResourceResult {
    const screen = this.#deps.screen;
    if (!screen) return result;
    const contents = result.contents.map((content) => {
      if (!("text" in content)) return content;
      const screened = screen.skillFile(owner.server, { uri: owner.uri, text: content.text });
      if (screened.held) throw new ProtocolError(ProtocolErrorCode.InvalidParams, heldSkillFileReason(owner.uri, screened), { uri: owner.uri.slice(0, 2048) });
      return screened.text === content.text ? content : { ...content, text: screened.text };
    });
    return { ...result, contents };
  }

  /** The servers whose app `session`'s host has read (resources/read of a ui:// resource). */
  appServersRead(session: SessionInfo): ReadonlySet<string> {
    return this.#appsRead.get(session.id) ?? new Set();
  }

  /** Prompts of every server `session` sees, as `server__prompt`; in place of those of a server it has no login to yet, how to log in. */
  async listPrompts(session?: SessionInfo): Promise<Prompt[]> {
    const listed = await this.#gather("prompts", async (client) => (await client.listPrompts(undefined, FRESH)).prompts, { session });
    return listed.flatMap(({ server, items, needsLogin, owner }) => [
      ...(needsLogin === undefined ? [] : [{ name: `${server}${SEPARATOR}log_in`, description: this.#described(server, needsLogin) }]),
      ...this.#screened("prompts", { server, items, owner }).map((p) => ({
        ...p,
        name: `${server}${SEPARATOR}${p.name}`,
        description: this.#described(server, p.description),
      })),
    ]);
  }

  /** A listed item's description as clients see it: its server named, secrets masked. */
  #described(server: string, description: string | undefined): string {
    return `[${server}] ${this.#deps.mask.text(description ?? "")}`.trim();
  }

  /** One prompt, from its server (an isolated server's: the session's own instance); the server's questions during it reach the session's client. */
  async getPrompt(
    params: GetPromptRequest["params"],
    caller: { session: SessionInfo; signal?: AbortSignal; resume?: InputResume | undefined },
  ): Promise<GetPromptResult> {
    const { server, name } = await this.#promptOwner(params.name, caller.session);
    const request = { method: "prompts/get" as const, params: { ...params, name } };
    return (await this.#ask(server, request, { ...caller, name: params.name, origin: "prompts/get" })) as GetPromptResult;
  }

  /** Argument completion, forwarded to the owner of the prompt or resource (an isolated server's: the session's own instance). */
  async complete(
    params: CompleteRequest["params"],
    { session, signal }: { session: SessionInfo; signal?: AbortSignal },
  ): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }> {
    const caller = { session, signal, origin: "completion/complete" };
    if (params.ref.type === "ref/prompt") {
      const { server, name } = await this.#promptOwner(params.ref.name, session);
      const request = { method: "completion/complete" as const, params: { ...params, ref: { ...params.ref, name } } };
      return (await this.#completing(server, request, { ...caller, name: params.ref.name })) as CompleteResult;
    }
    const owner = await this.#owner(params.ref.uri, session);
    const request = { method: "completion/complete" as const, params: { ...params, ref: { ...params.ref, uri: owner.uri } } };
    return (await this.#completing(owner.server, request, { ...caller, name: `${owner.server}${SEPARATOR}${params.ref.uri}` })) as CompleteResult;
  }

  /** A completion: 2026-07-28 lets no server ask during one, so a 2026-07-28 client cannot be sent a question that comes. */
  async #completing(server: string, request: Parameters<ToolCallPipeline["request"]>[1], caller: PipelineRequest): Promise<Record<string, unknown>> {
    try {
      return await this.#ask(server, request, caller);
    } catch (error) {
      if (!InputRequiredError.isInstance(error)) throw error;
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `${server} asked a question during completion/complete, which MCP 2026-07-28 lets a server ask only during tools/call, prompts/get and resources/read; codemux cannot pass it on to this client.`,
      );
    }
  }

  /** A request beyond tools, counted by the relay while it runs (the server's questions during it are the caller's). */
  #ask(server: string, request: Parameters<ToolCallPipeline["request"]>[1], caller: PipelineRequest): Promise<Record<string, unknown>> {
    return this.#masked(
      this.#deps.relay.during(server, { session: caller.session, name: request.method, signal: caller.signal }, () =>
        this.#deps.pipeline.request(server, request, caller).then(withoutServerInfo),
      ),
    );
  }

  /** A server's answer, or its error, masked on its way to the client (codemux's own input_required carries questions InputRounds masked). */
  async #masked<T>(answer: Promise<T>): Promise<T> {
    const { mask } = this.#deps;
    try {
      return mask.value(await answer);
    } catch (error) {
      throw InputRequiredError.isInstance(error) ? error : maskedError(error, mask);
    }
  }

  /**
   * One list of each ready server: from its listing connection, for the servers `session` sees (`everyShared`: all of
   * them, for names that hold for every session). A server with per-principal credentials lists from `session`'s own
   * instance, never the listing connection (the operator's, which lists tools only), and nothing without a session;
   * `needsLogin` says how to log in when the principal has no login to it yet.
   */
  async #gather<T>(
    capability: "resources" | "prompts",
    list: (client: Awaited<ReturnType<NonNullable<ToolPool["client"]>>>) => Promise<T[]>,
    { session, everyShared = false }: { session?: SessionInfo | undefined; everyShared?: boolean },
  ): Promise<Array<{ server: string; items: T[]; own?: true; owner?: string; needsLogin?: string }>> {
    await this.#deps.readiness.discovered();
    const perPrincipal = this.#actsAsPrincipal();
    const servers = this.#ready().filter((server) =>
      perPrincipal.has(server) ? session !== undefined && this.#sees(session, server) : everyShared || this.#sees(session, server),
    );
    return Promise.all(
      servers.map(async (server) => {
        const own = perPrincipal.has(server) && session ? ({ own: true, owner: session.principal } as const) : {};
        try {
          const client = await this.#client(server, perPrincipal.has(server) ? session : undefined);
          if (!client.getServerCapabilities()?.[capability]) return { server, items: [], ...own };
          return { server, items: await list(client), ...own };
        } catch (error) {
          if (perPrincipal.has(server) && AuthRequiredError.isInstance(error)) return { server, items: [], ...own, needsLogin: error.message };
          this.#deps.logger.warn(`[${server}] could not list ${capability}: ${this.#deps.mask.text((error as Error).message)}`);
          return { server, items: [], ...own };
        }
      }),
    );
  }

  /** The servers whose instances act as their principal (per-principal credentials). */
  #actsAsPrincipal(): Set<string> {
    return new Set(
      this.#deps.readiness
        .status()
        .filter((s) => s.credentials === "per-principal")
        .map((s) => s.name),
    );
  }

  /** Whether `session` sees a server's resources and prompts (every session without policies; the caller's own without a session). */
  #sees(session: SessionInfo | undefined, server: string): boolean {
    return session === undefined || this.#deps.access.seesServer(session, server);
  }

  #ready(): string[] {
    return this.#deps.readiness
      .status()
      .filter((s) => s.state === "ready")
      .map((s) => s.name);
  }

  /** A server's client; with `session`, an isolated server's instance of that session (prompts and completions may read its state). */
  async #client(server: string, session?: SessionInfo) {
    if (!this.#deps.pool.client) throw new ProtocolError(ProtocolErrorCode.InternalError, "This pool offers tools only.");
    return this.#deps.pool.client(server, session);
  }

  /** The server and its own URI for a URI a client gives: as listed, by the collision scheme, or by a server's template. */
  async #owner(uri: string, session?: SessionInfo): Promise<{ server: string; uri: string }> {
    const app = serverUriOwner(uri);
    // An app's or a skill's URI names its server: read there with its own URI, or unknown to whom the server is hidden.
    if (app !== undefined && this.#deps.pool.names.includes(app.server) && this.#sees(session, app.server)) return app;
    if (app === undefined && !this.#uris.has(uri)) await this.listResources();
    const known = app === undefined ? this.#uris.get(uri) : undefined;
    if (known && this.#sees(session, known.server)) return known;
    if (uri.startsWith(COLLISION_SCHEME)) {
      const rest = uri.slice(COLLISION_SCHEME.length);
      const server = rest.slice(0, rest.indexOf("/"));
      if (this.#deps.pool.names.includes(server) && this.#sees(session, server)) return { server, uri: rest.slice(server.length + 1) };
    }
    const templates = await this.#templates(session);
    for (const { server, items } of templates) {
      if (app === undefined && items.some((t) => new UriTemplate(t.uriTemplate).match(uri))) return { server, uri };
    }
    throw unknownResource(uri);
  }

  /** Each server's resource templates `session` sees, screened. */
  async #templates(session: SessionInfo | undefined): Promise<Array<{ server: string; items: ResourceTemplate[] }>> {
    const listed = await this.#gather("resources", async (client) => (await client.listResourceTemplates(undefined, FRESH)).resourceTemplates, { session });
    return listed.map((l) => ({ ...l, items: this.#screened("resourceTemplates", l) }));
  }

  /** What the scan lets the model see of a server's list; a principal's own instance's list is screened alike, but is not the server's report. */
  #screened<T extends { name: string }>(kind: ItemKind, { server, items, owner }: { server: string; items: T[]; owner?: string | undefined }): T[] {
    return this.#deps.screen ? this.#deps.screen.items(server, { kind, items, owner }) : items;
  }

  /**
   * Whether the scan holds back a resource or prompt: as its server lists it, or for a server with per-principal
   * credentials as the session's principal's own instance lists it (listed first when it has not been yet).
   */
  async #held({ server, kind, id }: { server: string; kind: "resources" | "prompts"; id: string }, session: SessionInfo | undefined): Promise<boolean> {
    const screen = this.#deps.screen;
    if (!screen) return false;
    const owner = session && this.#actsAsPrincipal().has(server) ? session.principal : undefined;
    const held = screen.holds(server, { kind, id }, owner);
    if (held !== undefined) return held;
    await (kind === "resources" ? this.listResources(session) : this.listPrompts(session));
    return screen.holds(server, { kind, id }, owner) === true;
  }

  async #promptOwner(qualified: string, session: SessionInfo | undefined): Promise<{ server: string; name: string }> {
    const split = splitQualifiedName(qualified);
    if (
      !split ||
      !this.#deps.pool.names.includes(split.server) ||
      !this.#sees(session, split.server) ||
      (await this.#held({ server: split.server, kind: "prompts", id: split.tool }, session))
    )
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No prompt "${qualified.slice(0, 200)}"; prompts are named server__prompt (prompts/list).`);
    return { server: split.server, name: split.tool };
  }

  /**
   * A server's log message goes to the one session the relay attributes it to (at or above that session's
   * level), else to codemux's own log: a line may carry a principal's arguments. Resource updates go to the
   * sessions that subscribed; list changes to all.
   */
  /**
   * Calls `listener` with each resources or prompts list change and each resource update a downstream server reports, with
   * the owner of the isolated instance that reported it (its owner's alone); returns the function that stops it.
   */
  onChange(listener: (change: FeatureChange, owner?: InstanceOwner) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /**
   * An approval (or a new scan mode) may show resources and prompts held back: every session is told both lists
   * changed (listeners too: a session that cannot be pushed to), and search lists every server's again.
   */
  rescreened(): void {
    for (const method of ["notifications/resources/list_changed", "notifications/prompts/list_changed"] as const) {
      const change: FeatureChange = { kind: method === "notifications/resources/list_changed" ? "resources" : "prompts" };
      for (const listener of this.#changeListeners) listener(change);
      for (const mcp of this.#servers.values()) void mcp.notification({ method }).catch(() => undefined);
    }
    for (const server of this.#deps.pool.names) void this.#indexServer(server);
  }

  #relayNotification(server: string, notification: { method: string; params?: Record<string, unknown> }, owner?: InstanceOwner): void {
    if (notification.method === "notifications/message") {
      this.#relayLogMessage(server, notification.params ?? {});
      return;
    }
    const change = this.#changeOf(server, notification, owner);
    if (change) for (const listener of this.#changeListeners) listener(change, owner);
    for (const [sessionId, mcp] of this.#servers) {
      if (owner && !this.#owns(owner, this.#sessions.get(sessionId))) continue;
      let out: ServerNotification | undefined;
      if (notification.method === "notifications/resources/updated") {
        // By what the session subscribed to: an instance's resource may be one the listing connection never listed.
        const shown = this.#subscriptions.shownFor(sessionId, server, String(notification.params?.uri ?? ""));
        if (shown === undefined) continue;
        out = { method: "notifications/resources/updated", params: { uri: shown } };
      } else if (notification.method === "notifications/resources/list_changed" || notification.method === "notifications/prompts/list_changed") {
        out = { method: notification.method } as ServerNotification;
      }
      if (out) void mcp.notification(out).catch(() => undefined);
    }
  }

  /** Whether `session` is (per session) or belongs to (per principal) an instance's owner. */
  #owns(owner: InstanceOwner, session: SessionInfo | undefined): boolean {
    return session !== undefined && session.principal === owner.principal && (owner.session === undefined || owner.session === session.id);
  }

  #changeOf(server: string, notification: { method: string; params?: Record<string, unknown> }, owner?: InstanceOwner): FeatureChange | undefined {
    if (notification.method === "notifications/resources/list_changed") return { kind: "resources" };
    if (notification.method === "notifications/prompts/list_changed") return { kind: "prompts" };
    if (notification.method !== "notifications/resources/updated") return undefined;
    const own = String(notification.params?.uri ?? "");
    // An instance's resources are listed under their server's name, as its owner's own.
    if (owner) return { kind: "resource", uri: `${COLLISION_SCHEME}${server}/${own}` };
    return { kind: "resource", uri: [...this.#uris].find(([, v]) => v.server === server && v.uri === own)?.[0] ?? shownServerUri(server, own) };
  }

  #relayLogMessage(server: string, raw: Record<string, unknown>, owner?: InstanceOwner): void {
    // Masked before it goes anywhere: to a client, or to codemux's own log (a file when it runs in the background).
    const params = this.#deps.mask.value(raw);
    const level = (LEVELS.includes(params.level as LoggingLevel) ? params.level : "info") as LoggingLevel;
    const logger = `${server}${params.logger ? `/${String(params.logger).slice(0, 100)}` : ""}`;
    const attributed = this.#deps.relay.attribute(server, { owner });
    const mcp = "session" in attributed ? this.#servers.get(attributed.session.id) : undefined;
    if (!mcp || !("session" in attributed)) {
      keepInOwnLog(this.#deps.logger, { level, source: logger, data: params.data });
      return;
    }
    const min = this.#levels.get(attributed.session.id);
    if (min && LEVELS.indexOf(level) < LEVELS.indexOf(min)) return;
    void mcp.notification({ method: "notifications/message", params: { ...params, level, logger, data: params.data } }).catch(() => undefined);
  }
}

/** Resource not found: -32602 with the URI in data, as the 2026-07-28 revision asks (SEP-2164). */
function unknownResource(uri: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `No server offers the resource "${uri.slice(0, 300)}"; resources/list shows what exists.`, {
    uri: uri.slice(0, 2048),
  });
}

/** Characters of a server's log line kept in codemux's own log, at most. */
const MAX_OWN_LOG_CHARS = 2_000;

/** A server's log line that no client session can be named for, in codemux's log at the nearest level, bounded. */
function keepInOwnLog(logger: Logger, { level, source, data }: { level: LoggingLevel; source: string; data: unknown }): void {
  let text: string;
  try {
    text = typeof data === "string" ? data : (JSON.stringify(data) ?? String(data));
  } catch {
    text = String(data);
  }
  const line = `[${source}] ${text.slice(0, MAX_OWN_LOG_CHARS)}${text.length > MAX_OWN_LOG_CHARS ? "…" : ""}`;
  const rank = LEVELS.indexOf(level);
  if (rank <= LEVELS.indexOf("debug")) logger.debug(line);
  else if (rank <= LEVELS.indexOf("notice")) logger.info(line);
  else if (rank <= LEVELS.indexOf("warning")) logger.warn(line);
  else logger.error(line);
}
