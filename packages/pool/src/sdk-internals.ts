import { Client, type StandardSchemaV1 } from "@modelcontextprotocol/client";

/**
 * Every place the pool reaches past the MCP SDK's public API, in this one file: a move of the pinned
 * SDK (`@modelcontextprotocol/client`) that takes one away fails `sdk-internals.test.ts`, and the
 * README's "SDK seams" names each of these.
 */
export const SDK_INTERNALS = {
  /** `Protocol#_wireCodec()`, protected: the negotiated era's decoding and validation, so the call lane accepts and refuses what the SDK's request path does. */
  _wireCodec: "Client.prototype (Protocol), protected method",
  /** `Client#_outboundMetaEnvelope()`, protected: the `_meta` envelope (protocol version, client info, capabilities) a 2026-era request carries, as the SDK writes it. */
  _outboundMetaEnvelope: "Client.prototype, protected method",
  /** `Client#_resolveNonCompleteResult()`, protected: what the request path does with an `input_required` answer the caller did not take. */
  _resolveNonCompleteResult: "Client.prototype, protected method",
} as const;

type WireCodec = ReturnType<Client["_wireCodec"]>;
/** A decoded `input_required` answer, as the codec gives it. */
export type InputRequiredDecoded = Extract<ReturnType<WireCodec["decodeResult"]>, { kind: "input_required" }>;

/** The SDK client with its era codec, request envelope and non-complete answers opened to subclasses under names of ours (hooks SDK v2 gives subclasses). */
export class CodecClient extends Client {
  protected wireCodec(): WireCodec {
    return this._wireCodec();
  }

  /**
   * The `_meta` envelope the SDK puts under every request and notification of the negotiated era (protocol version, client
   * info, capabilities; the sender's own `_meta` keys win over it); none on a 2025 connection. Fixed once connected.
   */
  envelope(): Readonly<Record<string, unknown>> | undefined {
    return this._outboundMetaEnvelope();
  }

  /** Settles a `tools/call` answered `input_required` whose caller did not ask for such answers, as the request path does (this client does not fulfil them). */
  protected refuseInputRequired(decoded: InputRequiredDecoded, params: Record<string, unknown>): Promise<unknown> {
    const codec = this._wireCodec();
    const resultSchema: StandardSchemaV1 = {
      "~standard": {
        version: 1,
        vendor: "codemux",
        validate: (value) => {
          const checked = codec.validateResult("tools/call", value);
          return checked.ok ? { value: checked.value } : { issues: [{ message: checked.reason === "invalid" ? checked.message : "not-in-era: tools/call" }] };
        },
      },
    };
    return this._resolveNonCompleteResult(decoded, {
      codec,
      request: { method: "tools/call", params },
      resultSchema,
      options: undefined,
      flowStartedAt: Date.now(),
      retry: (retried, options) => this.request({ method: "tools/call", params: retried } as never, options),
    });
  }
}
