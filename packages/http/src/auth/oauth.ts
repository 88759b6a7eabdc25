import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from "jose";
import { HttpError } from "../errors";
import { boundedFetch } from "./bounded-fetch";
import type { Identity } from "./identity";

/** codemux as an OAuth 2.1 protected resource: which authorization server's access tokens it accepts. */
export interface OAuthOptions {
  /** The authorization server's issuer URL, exactly as its tokens' `iss` says. */
  issuer: string;
  /** Where its signing keys are; read from the issuer's metadata (RFC 8414, else OpenID discovery) when absent. */
  jwksUri?: string;
  /** The `aud` a token must carry; `publicUrl` (or `publicUrl` + `/mcp`) when absent. */
  audience?: string[];
  /** Scopes listed in the protected-resource metadata, for clients to ask for. */
  scopesSupported?: string[];
  /** Scopes every request needs (e.g. `["mcp"]`); a token without them gets 403 `insufficient_scope`. None by default. */
  requiredScopes?: string[];
  /** The claim holding the subject's groups; `groups` by default. */
  groupsClaim?: string;
  /** Time for one request to the authorization server (metadata, keys); 5 s by default. */
  fetchTimeoutMs?: number;
}

/** JWTs longer than this are refused before any parsing: real access tokens are a few KiB. */
const MAX_JWT_CHARS = 8192;
/** Asymmetric algorithms only: `none` and shared-secret ones (HS*) can never pass. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
const MAX_CLAIM_VALUES = 256;
const MAX_SUBJECT_CHARS = 255;
/** After a failed discovery, requests wait this long before codemux asks the authorization server again. */
const DISCOVERY_RETRY_MS = 10_000;

/** A bearer token refused: 401 `invalid_token`, or 403 `insufficient_scope` naming the scopes needed. */
export class BearerError extends HttpError {
  readonly oauthError: "invalid_token" | "insufficient_scope";
  readonly scope: string | undefined;

  constructor(oauthError: "invalid_token" | "insufficient_scope", message: string, scope?: string) {
    super(oauthError === "invalid_token" ? "UNAUTHORIZED" : "FORBIDDEN", message);
    this.oauthError = oauthError;
    this.scope = scope;
  }
}

/** Checks JWT access tokens of one authorization server: signature by its keys, issuer, audience, expiry and scopes. */
export class OAuthVerifier {
  readonly #options: OAuthOptions & { audience: string[] };
  #keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  #failedAt = 0;

  constructor(options: OAuthOptions & { audience: string[] }) {
    this.#options = options;
  }

  /** Whether a presented bearer value is shaped like a JWT (three base64url parts); static tokens are tried first. */
  static looksLikeJwt(value: string): boolean {
    return value.length <= MAX_JWT_CHARS && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value);
  }

  async verify(token: string): Promise<Identity> {
    if (!OAuthVerifier.looksLikeJwt(token)) throw new BearerError("invalid_token", "The bearer token is neither a known token nor a JWT access token.");
    const keys = await this.#jwks();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ["exp", "sub"],
        clockTolerance: 30,
      }));
    } catch (error) {
      // The keys could not be fetched: the token may well be good, so this is not its holder's fault.
      if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError))
        throw unavailable(this.#options.issuer, `its keys could not be read (${(error as Error).message})`);
      throw new BearerError("invalid_token", refusal(error, this.#options));
    }
    // A signed claim is still the issuer's input: sub must be a string (RFC 7519 §4.1.2) before anything formats it.
    const subject = payload.sub;
    if (typeof subject !== "string")
      throw new BearerError(
        "invalid_token",
        `The access token's subject (sub) is ${describeClaim(subject)}, not a string; the authorization server must issue sub as a string.`,
      );
    if (subject.length === 0 || subject.length > MAX_SUBJECT_CHARS)
      throw new BearerError("invalid_token", "The access token's subject (sub) is empty or too long.");
    const scopes = scopesOf(payload);
    const missing = (this.#options.requiredScopes ?? []).filter((s) => !scopes.includes(s));
    if (missing.length > 0) {
      throw new BearerError(
        "insufficient_scope",
        `The access token lacks the scope${missing.length === 1 ? "" : "s"} ${missing.join(", ")}, which codemux needs for every request; ask the authorization server for ${missing.join(" ")}.`,
        (this.#options.requiredScopes ?? []).join(" "),
      );
    }
    const groups = labels(payload[this.#options.groupsClaim ?? "groups"]);
    return {
      principal: `oauth:${this.#options.issuer}#${subject}`,
      scopes,
      ...(groups.length ? { groups } : {}),
      ...(typeof payload.exp === "number" ? { expiresAt: payload.exp * 1000 } : {}),
    };
  }

  #jwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#keys === undefined && Date.now() - this.#failedAt < DISCOVERY_RETRY_MS)
      return Promise.reject(unavailable(this.#options.issuer, "it did not answer a moment ago"));
    this.#keys ??= this.#discover().catch((error: unknown) => {
      this.#keys = undefined;
      this.#failedAt = Date.now();
      throw HttpError.isInstance(error) ? error : unavailable(this.#options.issuer, (error as Error).message);
    });
    return this.#keys;
  }

  async #discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const timeoutMs = this.#options.fetchTimeoutMs ?? 5000;
    const jwksUri = this.#options.jwksUri ?? (await this.#jwksUriOfIssuer(timeoutMs));
    return createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: timeoutMs,
      // A key rotated in is fetched at most this often when an unknown kid appears.
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
      [customFetch]: (url, init) => boundedFetch(url, { timeoutMs, ...(init.signal ? { signal: init.signal } : {}) }),
    });
  }

  /** The issuer's `jwks_uri`, from its RFC 8414 metadata, else its OpenID configuration. */
  async #jwksUriOfIssuer(timeoutMs: number): Promise<string> {
    const { issuer } = this.#options;
    const url = new URL(issuer);
    const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
    const candidates = [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`];
    for (const candidate of candidates) {
      const response = await boundedFetch(candidate, { timeoutMs });
      if (!response.ok) continue;
      const metadata = (await response.json().catch(() => undefined)) as { issuer?: unknown; jwks_uri?: unknown } | undefined;
      // RFC 8414 §3.3: metadata for another issuer must not be used.
      if (metadata?.issuer !== issuer)
        throw unavailable(issuer, `its metadata at ${candidate} names issuer ${JSON.stringify(metadata?.issuer)?.slice(0, 100)}`);
      if (typeof metadata.jwks_uri !== "string") throw unavailable(issuer, `its metadata at ${candidate} has no jwks_uri`);
      return metadata.jwks_uri;
    }
    throw unavailable(issuer, "it publishes no metadata (.well-known/oauth-authorization-server or openid-configuration)");
  }
}

function unavailable(issuer: string, why: string): HttpError {
  return new HttpError(
    "AUTH_UNAVAILABLE",
    `codemux cannot check access tokens of ${issuer}: ${why.slice(0, 300)}. Try again shortly; if it persists, check http.oauth.issuer (or set http.oauth.jwksUri).`,
    { headers: { "retry-after": "10" } },
  );
}

/** Why jose refused a token, as a sentence for the client (never the token). */
function refusal(error: unknown, options: { issuer: string; audience: string[] }): string {
  if (error instanceof errors.JWTExpired) return "The access token expired; get a new one (refresh it) and retry.";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud")
      return `The access token is for another audience; codemux accepts tokens issued for ${options.audience.join(" or ")} (the resource parameter).`;
    if (error.claim === "iss") return `The access token was issued by another authorization server; codemux accepts tokens of ${options.issuer}.`;
    if (error.claim === "nbf") return "The access token is not valid yet (nbf).";
    return `The access token's ${error.claim} claim is missing or invalid.`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return "The access token is unsigned or uses an algorithm codemux does not accept.";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed)
    return "The access token's signature does not match the authorization server's keys.";
  return "The access token is not a valid JWT.";
}

/** A claim's kind in words, never its content. */
function describeClaim(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Scopes from `scope` (space-separated, RFC 9068) or `scp` (a list, as some servers write it). */
function scopesOf(payload: JWTPayload): string[] {
  const value = payload.scope ?? payload.scp;
  return labels(typeof value === "string" ? value.split(" ") : value);
}

/** Up to a bounded number of short strings from a claim; anything else is ignored. */
function labels(value: unknown): string[] {
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  return list.slice(0, MAX_CLAIM_VALUES).filter((v): v is string => typeof v === "string" && v.length > 0 && v.length <= 256);
}
