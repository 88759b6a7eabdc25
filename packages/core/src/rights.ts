/** The right to administer the gateway: reload, approvals, other principals' jobs, policies. */
export const ADMIN_SCOPE = "admin";
/** The right to read `/metrics`: a scraper needs it, and it is not an admin. */
export const METRICS_SCOPE = "metrics";

/**
 * Whether a session may use the right named by `scope`. Undefined scopes mean none are in force (the
 * owner over stdio, HTTP without auth, a token file that declares no scopes at all): every right, as
 * before scopes existed. A list grants exactly what it names.
 */
export function hasScope(session: { scopes?: readonly string[] }, scope: string): boolean {
  return session.scopes === undefined || session.scopes.includes(scope);
}
