import { SdkErrorCode, SdkHttpError, SseError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { describeHttpError, describeNetworkFailure, snippet } from "./http-errors";

describe("HTTP error descriptions", () => {
  it("summarizes an HTML error page by its title, never its markup", () => {
    const page = "<!DOCTYPE html><html><head><title>Page Not Found</title><style>body{}</style></head><body><h1>Oops</h1>".padEnd(5000, "x");
    const text = describeHttpError(
      new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${page}`, { status: 404, statusText: "Not Found", text: page }),
      "https://x.dev/mcp?apikey=k",
    );
    expect(text).toBe(
      "HTTP 404 Not Found from https://x.dev/mcp?apikey=***: Page Not Found (check the URL's path (often /mcp, or /sse for the legacy transport))",
    );
  });

  it("keeps a JSON-RPC error's message and bounds plain text", () => {
    expect(snippet('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}')).toBe("Session not found");
    expect(snippet("y".repeat(1000)).length).toBeLessThanOrEqual(161);
  });

  it("names the URL and the cause of a network failure", () => {
    const refused = new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
    expect(describeNetworkFailure(refused, "http://127.0.0.1:9/mcp")).toBe(
      "cannot reach http://127.0.0.1:9/mcp: connection refused (connect ECONNREFUSED 127.0.0.1:9)",
    );
    const tls = new TypeError("fetch failed", { cause: Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }) });
    expect(describeNetworkFailure(tls, "https://x.dev/mcp")).toBe(
      "cannot reach https://x.dev/mcp: TLS failure (self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT))",
    );
    const sse = new SseError(undefined, "TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:9", {} as never);
    expect(describeHttpError(sse, "http://127.0.0.1:9/sse?token=t")).toBe(
      "cannot reach http://127.0.0.1:9/sse?token=***: connection refused (connect ECONNREFUSED 127.0.0.1:9)",
    );
  });
});
