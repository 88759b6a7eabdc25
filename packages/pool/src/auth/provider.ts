import {
  computeScopeUnion,
  isStrictScopeSuperset,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  type StoredOAuthClientInformation,
} from "@modelcontextprotocol/client";
import type { OAuthSettings } from "../config/types";
import { AuthRequiredError } from "./auth-required";
import { readAuthRecord, writeAuthRecord, type AuthRecord } from "./store";

export interface FileOAuthProviderOptions {
  server: string;
  /** The MCP server's URL: a stored login for another URL is not used. */
  url: string;
  /** The folder of login files (`authDirectory()`). */
  dir: string;
  /** The entry's `oauth` block: a pre-registered client, a scope. */
  settings?: OAuthSettings;
  /** codemux's own client ID metadata document (a login through its public route), used where the config names none. */
  clientMetadataUrl?: string;
  /** Set by `codemux auth login`: the loopback callback, and where the authorization URL goes. Unset: connecting, where a missing login is an AuthRequiredError. */
  login?: { redirectUrl: string; state: string; onAuthorizationUrl: (url: URL) => void | Promise<void> };
}

// Used only while connecting: the SDK needs some redirect URL to not take the client-credentials path; no browser flow starts there.
const PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback";

/**
 * The SDK's OAuthClientProvider over a per-server file (`<dir>/<server>.json`, 0600): client information,
 * tokens and discovery state. The SDK runs discovery, registration, PKCE and refresh; this only stores.
 */
export class FileOAuthProvider implements OAuthClientProvider {
  #record: AuthRecord | undefined;
  #loaded = false;
  #codeVerifier: string | undefined;
  /** Tokens were dropped because the authorization server refused them (a refused refresh). */
  #lostTokens = false;

  constructor(readonly options: FileOAuthProviderOptions) {}

  get redirectUrl(): string {
    return this.options.login?.redirectUrl ?? PLACEHOLDER_REDIRECT;
  }

  /** The configured client ID metadata document, else codemux's own: the SDK uses it as the client id where the authorization server supports them, and registers elsewhere. */
  get clientMetadataUrl(): string | undefined {
    return this.options.settings?.clientMetadataUrl ?? this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { settings } = this.options;
    return {
      client_name: "codemux",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: settings?.clientSecret ? "client_secret_post" : "none",
      ...(settings?.scope ? { scope: settings.scope } : {}),
    };
  }

  state(): string {
    return this.options.login?.state ?? "";
  }

  async clientInformation(context?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const record = await this.#load();
    const stored = clientOf(record, context?.issuer);
    const { clientId, clientSecret } = this.options.settings ?? {};
    // A client id in the config wins over one registered earlier; once bound to an issuer the stored copy carries the stamp.
    if (clientId && stored?.client_id !== clientId) return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) };
    // Connecting, no client at this authorization server means no login to it: said now, before the SDK registers one for nothing.
    if (!this.options.login && !clientId && stored === undefined && context?.issuer !== undefined) {
      const elsewhere = Object.keys(record?.clients ?? {}).length > 0;
      throw new AuthRequiredError(this.options.server, elsewhere ? `it moved to another authorization server, ${originOf(context.issuer)}` : "no login yet");
    }
    return stored;
  }

  async saveClientInformation(clientInformation: StoredOAuthClientInformation, context?: OAuthClientInformationContext): Promise<void> {
    if (!this.options.login && !this.options.settings?.clientId) throw new AuthRequiredError(this.options.server);
    const issuer = context?.issuer ?? clientInformation.issuer;
    if (issuer === undefined) return this.#update({ clientInformation });
    const record = this.options.login ? await this.#load() : await this.#fresh();
    // Kept per issuer: a client id is the authorization server's own, and another's is never offered to it.
    await this.#update({ clients: { ...record?.clients, [issuer]: { ...clientInformation, issuer } }, clientInformation: undefined });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.#load())?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const now = Date.now();
    await this.#update({
      tokens,
      savedAt: new Date(now).toISOString(),
      expiresAt: typeof tokens.expires_in === "number" ? new Date(now + tokens.expires_in * 1000).toISOString() : undefined,
    });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.options.login) {
      const record = await this.#load();
      // The SDK asks for what the login had and what the server challenged for (SEP-2350): more than the login got is a step-up.
      const asked = authorizationUrl.searchParams.get("scope") ?? undefined;
      const held = computeScopeUnion(record?.scope, record?.tokens?.scope);
      if (record?.tokens && !this.#lostTokens && held !== undefined && isStrictScopeSuperset(asked, held)) {
        // Kept for the next login, which asks for all of it.
        await this.#update({ scope: asked });
        const more = asked?.split(" ").filter((s) => !` ${held ?? ""} `.includes(` ${s} `)) ?? [];
        throw new AuthRequiredError(this.options.server, `it asks for more access than the login gave: scope ${more.join(" ")}`, {
          how: `run \`codemux auth login ${this.options.server}\`, which asks for scope ${asked}`,
        });
      }
      throw new AuthRequiredError(this.options.server, record?.tokens || this.#lostTokens ? "the login expired and could not be refreshed" : "no login yet");
    }
    await this.options.login.onAuthorizationUrl(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#codeVerifier) throw new Error(`No login is in progress for "${this.options.server}"; run codemux auth login ${this.options.server}.`);
    return this.#codeVerifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "verifier") {
      this.#codeVerifier = undefined;
      return;
    }
    const held = await this.#load();
    // Read again: a `codemux auth login` in another process may have replaced what this connection holds.
    const record = await this.#fresh();
    if (!record) return;
    if (record.tokens?.access_token !== held?.tokens?.access_token) {
      this.#record = record;
      return;
    }
    const next: AuthRecord = { ...record };
    if (scope === "all" || scope === "client") {
      delete next.clientInformation;
      delete next.clients;
    }
    if (scope === "all" || scope === "tokens") {
      this.#lostTokens ||= next.tokens !== undefined;
      delete next.tokens;
      delete next.expiresAt;
    }
    if (scope === "all" || scope === "discovery") delete next.discoveryState;
    await this.#store(next);
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    // Connecting, each authorization discovers afresh: a server whose metadata now names another authorization server is seen (SEP-2352).
    return this.options.login ? (await this.#load())?.discoveryState : undefined;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    // While connecting without a login, discovery is kept in memory only: no file for a server never logged in to.
    if (!this.options.login && !(await this.#load())) return;
    await this.#update({ discoveryState: state });
  }

  /** Forgets tokens, the discovery (done again: the server may have moved) and a registration made for another callback URL before a fresh login. */
  async prepareLogin(): Promise<void> {
    const record = await this.#load();
    if (!record) return;
    const next: AuthRecord = { ...record };
    delete next.tokens;
    delete next.expiresAt;
    delete next.discoveryState;
    const configured = this.options.settings?.clientId;
    const stale = (registered: { client_id?: string; redirect_uris?: string[] } | undefined) =>
      registered !== undefined && registered.client_id !== configured && !registered.redirect_uris?.includes(this.redirectUrl);
    if (stale(next.clientInformation as { client_id?: string } | undefined)) delete next.clientInformation;
    if (next.clients) next.clients = Object.fromEntries(Object.entries(next.clients).filter(([, registered]) => !stale(registered as { client_id?: string })));
    this.#record = next;
  }

  async #load(): Promise<AuthRecord | undefined> {
    if (!this.#loaded) {
      this.#record = await this.#fresh();
      this.#loaded = true;
    }
    return this.#record;
  }

  async #fresh(): Promise<AuthRecord | undefined> {
    const record = await readAuthRecord(this.options.dir, this.options.server);
    return record && record.url === this.options.url ? record : undefined;
  }

  async #update(change: Partial<AuthRecord>): Promise<void> {
    // While logging in, the record prepared in memory (tokens dropped) is the base; otherwise the file as it is now.
    const base = this.options.login ? await this.#load() : await this.#fresh();
    const current = base ?? { server: this.options.server, url: this.options.url };
    const next: AuthRecord = { ...current, ...change };
    for (const key of Object.keys(next) as (keyof AuthRecord)[]) if (next[key] === undefined) delete next[key];
    await this.#store(next);
  }

  async #store(record: AuthRecord): Promise<void> {
    this.#record = record;
    this.#loaded = true;
    await writeAuthRecord(this.options.dir, record);
  }
}

/** An issuer as a user recognizes it (its origin), short and without a path an attacker may have chosen. */
function originOf(issuer: string): string {
  try {
    return new URL(issuer).origin;
  } catch {
    return "one whose address is not a URL";
  }
}

/** The client `record` holds for `issuer`: its own entry, else one stored before registrations were kept per issuer (the SDK drops it when its stamp names another issuer). */
function clientOf(record: AuthRecord | undefined, issuer: string | undefined): StoredOAuthClientInformation | undefined {
  return (issuer === undefined ? undefined : record?.clients?.[issuer]) ?? record?.clientInformation;
}
