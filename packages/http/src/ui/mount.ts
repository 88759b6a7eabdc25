import type { SessionInfo } from "@codemux/core";
import { hostname } from "node:os";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Authenticator } from "../auth/authenticator";
import type { FailureLimit } from "../auth/failure-limit";
import type { Identity } from "../auth/identity";
import type { HttpCore } from "../context";
import type { Metrics } from "../metrics";
import type { ResolvedOptions } from "../options";
import type { ActivityLog } from "./activity";
import { AdminUi } from "./admin-ui";

/** The admin page of one HTTP server, wired to its auth and options (the one call `CodemuxHttpServer` makes). */
export function mountAdminUi(deps: {
  core: HttpCore;
  options: ResolvedOptions;
  auth: Authenticator;
  principalSession: (identity: Identity) => SessionInfo;
  port: () => number;
  authenticated: (socket: Socket) => void;
  clientAddress: (req: IncomingMessage) => string;
  failures: FailureLimit;
  metrics: Metrics;
  activity: ActivityLog;
}): AdminUi {
  const { core, options, auth } = deps;
  const refused = deps.metrics.counter("codemux_ui_sign_ins_refused_total", "Admin page sign-ins refused, by reason (bad_token, not_admin, too_many).");
  return new AdminUi({
    core,
    activity: deps.activity,
    sources: options.ui,
    authRequired: () => auth.required,
    identify: (token) => auth.identify(token, "/ui", { oauth: true }),
    principalSession: deps.principalSession,
    principals: () => auth.holders.map(({ name: _, ...holder }) => holder),
    oauthIssuer: options.oauth?.issuer,
    // Several instances behind one name each show their own state: the page says whose.
    instance: () => `${hostname()}:${deps.port()} (pid ${process.pid})`,
    reloadRefused: options.reloadRefused,
    authenticated: deps.authenticated,
    clientAddress: deps.clientAddress,
    failures: deps.failures,
    onSignInRefused: (reason) => refused.inc({ reason }),
    secureCookie: options.publicUrl?.startsWith("https:") ?? false,
    logError: (error) =>
      options.log({
        time: new Date().toISOString(),
        level: "error",
        msg: "admin page failed",
        error: error instanceof Error ? (error.stack ?? error.message).slice(0, 2000) : String(error),
      }),
  });
}
