import type { RequestId } from "@modelcontextprotocol/server";

/**
 * Every place the http package reaches past the MCP SDK's public API, in this one file: a move of the
 * pinned SDK (`@modelcontextprotocol/server`) that takes one away fails `sdk-internals.test.ts`, and the
 * README's "SDK seams" names each of these. `JsonAnswerTransport` checks for them at construction and
 * keeps the SDK's own path when one is missing, so a move costs speed, never an answer.
 */
export const SDK_INTERNALS = {
  /** `WebStandardStreamableHTTPServerTransport#_streamMapping`: its SSE streams by id, which a JSON-answered request's fallback stream joins. */
  _streamMapping: "WebStandardStreamableHTTPServerTransport, private field (a Map)",
  /** `#_requestToStreamMapping`: which stream a request's messages go to. */
  _requestToStreamMapping: "WebStandardStreamableHTTPServerTransport, private field (a Map)",
  /** `#writePrimingEvent`: the first event of a resumable stream, written as the SDK writes it. */
  writePrimingEvent: "WebStandardStreamableHTTPServerTransport, private method",
  /** `#startKeepAlive`: the stream's keep-alive comments. */
  startKeepAlive: "WebStandardStreamableHTTPServerTransport, private method",
} as const;

/** The SDK transport's stream bookkeeping, as `JsonAnswerTransport` uses it (see SDK_INTERNALS). */
export interface SdkStreams {
  _streamMapping: Map<string, { controller?: ReadableStreamDefaultController<Uint8Array>; encoder?: TextEncoder; cleanup: () => void }>;
  _requestToStreamMapping: Map<RequestId, string>;
  writePrimingEvent(controller: ReadableStreamDefaultController<Uint8Array>, encoder: TextEncoder, streamId: string, protocolVersion: string): Promise<void>;
  startKeepAlive(controller: ReadableStreamDefaultController<Uint8Array>, encoder: TextEncoder): ReturnType<typeof setInterval> | undefined;
}

/** Whether a transport has every internal `SdkStreams` names, with the right kinds. */
export function hasSdkStreams(transport: object): boolean {
  const sdk = transport as Partial<SdkStreams>;
  return (
    sdk._streamMapping instanceof Map &&
    sdk._requestToStreamMapping instanceof Map &&
    typeof sdk.writePrimingEvent === "function" &&
    typeof sdk.startKeepAlive === "function"
  );
}
