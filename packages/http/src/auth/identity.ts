import type { SessionInfo } from "@codemux/core";

/** Who made a request, as authentication found it. */
export interface Identity {
  /** `token:<name>`, `oauth:<issuer>#<subject>`, or `anonymous`. */
  principal: string;
  groups?: readonly string[];
  /** Undefined when no scopes are in force (every right); see `hasScope`. */
  scopes?: readonly string[];
  /** When the credential stops being accepted (ms since the epoch); its sessions end then. */
  expiresAt?: number;
}

/** The session fields an identity gives: principal, groups and scopes. */
export function sessionFields(identity: Identity): Pick<SessionInfo, "principal" | "groups" | "scopes"> {
  return {
    principal: identity.principal,
    ...(identity.groups ? { groups: identity.groups } : {}),
    ...(identity.scopes ? { scopes: identity.scopes } : {}),
  };
}
