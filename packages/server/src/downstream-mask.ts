import type { SecretMask } from "@codemux/core";
import type { ServerRequestRelay, ServerStatus } from "@codemux/pool";

/**
 * The masking of what downstream servers send outside the call pipeline (whose results and errors the
 * redact plugin masks itself): each helper is one call site's, so that SECURITY.md's list stays true.
 */

/** A relay whose questions (sampling, elicitation) reach the client with their text masked; roots requests carry no server text. */
export function maskedRelay(relay: ServerRequestRelay, mask: SecretMask): ServerRequestRelay {
  return {
    capabilities: relay.capabilities,
    handle: (server, request, context) =>
      relay.handle(
        server,
        request.method === "roots/list" || request.params === undefined ? request : { ...request, params: mask.value(request.params) },
        context,
      ),
  };
}

/** A downstream error (a JSON-RPC error of prompts/get or completion) with its message and data masked, keeping its code; others as they are. */
export function maskedError(error: unknown, mask: SecretMask): unknown {
  if (!(error instanceof Error)) return error;
  const message = mask.text(error.message);
  const data = (error as { data?: unknown }).data;
  const maskedData = data === undefined ? undefined : mask.value(data);
  if (message === error.message && maskedData === data) return error;
  // A plain copy: the original's cause and stack hold the server's words unmasked.
  return Object.assign(new Error(message), {
    name: error.name,
    ...("code" in error ? { code: (error as { code?: unknown }).code } : {}),
    ...(maskedData === undefined ? {} : { data: maskedData }),
  });
}

/** A server's status with what its process wrote (the failure reason, the stderr tail, its instructions) masked. */
export function maskedStatus(status: ServerStatus, mask: SecretMask): ServerStatus {
  return {
    ...status,
    ...(status.error === undefined ? {} : { error: mask.text(status.error) }),
    ...(status.instructions === undefined ? {} : { instructions: mask.text(status.instructions) }),
    stderrTail: status.stderrTail.map((line) => mask.text(line)),
  };
}

/** The servers as meta-tools see them: their names, and their status as `status()` gives it (masked). */
export function maskedPoolView(core: { readonly pool: { readonly names: string[] }; status(): ServerStatus[] }): {
  readonly names: string[];
  status(): ServerStatus[];
} {
  return {
    get names() {
      return core.pool.names;
    },
    status: () => core.status(),
  };
}
