import { Client } from "@modelcontextprotocol/client";

/**
 * Every place the pool reaches past the MCP SDK's public API, in this one file: a move of the pinned
 * SDK (`@modelcontextprotocol/client`) that takes one away fails `sdk-internals.test.ts`, and the
 * README's "SDK seams" names each of these.
 */
export const SDK_INTERNALS = {
  /** `Protocol#_wireCodec()`, protected: the negotiated era's decoding and validation, so the call lane accepts and refuses what the SDK's request path does. */
  _wireCodec: "Client.prototype (Protocol), protected method",
} as const;

/** The SDK client with its era codec opened to subclasses under a name of ours (`_wireCodec` is the hook SDK v2 gives subclasses). */
export class CodecClient extends Client {
  protected wireCodec(): ReturnType<Client["_wireCodec"]> {
    return this._wireCodec();
  }
}
