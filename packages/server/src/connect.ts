import { isSwitchedOff } from "@codemux/core";
import type { Server, Transport } from "@modelcontextprotocol/server";
import { attachFastLane, type FastLane } from "./fast-lane";
import { createSession, type SessionHost, type SessionServerOptions } from "./session";

export interface SessionServerLaneOptions extends SessionServerOptions {
  /**
   * Answer plain tools/call requests of a 2025-era session on the server lane (the same answers, without the SDK
   * Server's parses); true unless the environment says `CODEMUX_SERVER_LANE=0` (or `false`, `off`).
   */
  fastLane?: boolean;
}

/** A client session's SDK server, and how to connect it to its transport. */
export interface ConnectableSession {
  server: Server;
  /** Connects the server to `transport`; with the lane on, a 2025-era session's plain calls take it (what it did: the result). */
  connect(transport: Transport): Promise<FastLane | undefined>;
}

/** Whether sessions take the server lane: `fastLane` when given, else on unless `CODEMUX_SERVER_LANE` switches it off. */
export const serverLaneOn = (fastLane?: boolean): boolean => fastLane ?? !isSwitchedOff(process.env.CODEMUX_SERVER_LANE);

/**
 * The one seam of the server lane for front ends that connect their transports themselves (HTTP's Streamable
 * and SSE sessions): `createSessionServer`'s server, connected with the lane in front of the SDK's handlers.
 */
export function openSessionServer(core: SessionHost, options: SessionServerLaneOptions = {}): ConnectableSession {
  const { fastLane, ...rest } = options;
  const session = createSession(core, rest);
  const lane = serverLaneOn(fastLane) && (rest.era ?? "legacy") === "legacy";
  return {
    server: session.server,
    connect: async (transport) => {
      await session.server.connect(transport);
      return lane ? attachFastLane(session, transport) : undefined;
    },
  };
}
