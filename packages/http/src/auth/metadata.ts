import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "../errors";
import type { ResolvedOptions } from "../options";
import { sendJson } from "../respond";
import { METADATA_PATH } from "./authenticator";

/** Whether a path is one of the protected-resource metadata documents (the root one, or /mcp's). */
export function isMetadataPath(path: string): boolean {
  return path === METADATA_PATH || path.startsWith(`${METADATA_PATH}/`);
}

/**
 * `GET /.well-known/oauth-protected-resource[/mcp]` (RFC 9728): which authorization server issues
 * tokens for codemux, for which resource, and with which scopes. Public, like any metadata.
 */
export function handleResourceMetadata(exchange: { req: IncomingMessage; res: ServerResponse }, path: string, options: ResolvedOptions): void {
  const { req, res } = exchange;
  const { oauth, publicUrl } = options;
  const suffix = path.slice(METADATA_PATH.length);
  if (!oauth || !publicUrl || (suffix !== "" && suffix !== "/mcp"))
    throw new HttpError(
      "NOT_FOUND",
      `Nothing at ${path.slice(0, 100)}: codemux publishes OAuth metadata only with http.oauth and http.publicUrl set, at ${METADATA_PATH} and ${METADATA_PATH}/mcp.`,
    );
  if (req.method !== "GET") throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on this path.", { headers: { allow: "GET" } });
  sendJson(res, 200, {
    // §3.3: the resource is the URL the well-known path was built from.
    resource: `${publicUrl}${suffix}`,
    authorization_servers: [oauth.issuer],
    bearer_methods_supported: ["header"],
    ...(oauth.scopesSupported?.length ? { scopes_supported: oauth.scopesSupported } : {}),
    resource_name: "codemux",
  });
}
