/** The principal of the one user over stdio (and of the CLI): what it saves is the owner's own, so no other identity may take this name. */
export const LOCAL_PRINCIPAL = "local";

/** The principal of every caller when serving over HTTP without tokens. */
export const ANONYMOUS_PRINCIPAL = "anonymous";

/** The principal a static token's holder acts as: named by kind, so it never merges with an OAuth subject or the owner. */
export function tokenPrincipal(name: string): string {
  return `token:${name}`;
}

/** A principal id as logs and the audit log name it, when one is typed by hand (`codemux forget`, the admin route): 1-512 characters, no control characters. */
export function isPrincipalId(text: string): boolean {
  return text.length > 0 && text.length <= 512 && !/[\u0000-\u001f]/.test(text);
}

/**
 * A principal as a person names it, in the config (`http.limits.principals`, `policies.rules[].principals`,
 * `perPrincipal`) or on the command line (`codemux forget`, `codemux policy check`, `DELETE /v1/principals/...`):
 * a bare token name (`ci`) stands for `token:ci`, since tokens are what people name by hand; an id with a kind
 * (`token:ci`, `oauth:ISSUER#SUBJECT`), `local` and `anonymous` stay as they are.
 *
 * @example
 * principalOfName("bob"); // "token:bob"
 * principalOfName("oauth:https://idp.example#42"); // unchanged
 */
export function principalOfName(name: string): string {
  return name.includes(":") || name === LOCAL_PRINCIPAL || name === ANONYMOUS_PRINCIPAL ? name : tokenPrincipal(name);
}
