import { describe, expect, it } from "vitest";
import { listenFromEnv, parseListen } from "./address";

describe("listenFromEnv", () => {
  it("reads CODEMUX_HOST and CODEMUX_PORT, and takes unset or empty ones as 127.0.0.1:3920", () => {
    expect(listenFromEnv({ CODEMUX_HOST: "0.0.0.0", CODEMUX_PORT: "8080" })).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(listenFromEnv({ CODEMUX_HOST: "[::]", CODEMUX_PORT: " 0 " })).toEqual({ host: "::", port: 0 });
    expect(listenFromEnv({ CODEMUX_HOST: "", CODEMUX_PORT: "" })).toEqual({ host: "127.0.0.1", port: 3920 });
    expect(listenFromEnv({})).toEqual({ host: "127.0.0.1", port: 3920 });
  });

  it.each([
    [{ CODEMUX_PORT: "http" }, 'CODEMUX_PORT is "http"; give a port number from 0 to 65535 (0 picks a free one).'],
    [{ CODEMUX_PORT: "65536" }, 'CODEMUX_PORT is "65536"; give a port number'],
    [{ CODEMUX_PORT: "-1" }, 'CODEMUX_PORT is "-1"; give a port number'],
    [
      { CODEMUX_HOST: "0.0.0.0:8080" },
      'CODEMUX_HOST is "0.0.0.0:8080"; give a host name or address without a port, such as 0.0.0.0 (the port goes in CODEMUX_PORT).',
    ],
    [{ CODEMUX_HOST: "evil host/x" }, 'CODEMUX_HOST is "evil host/x"; give a host name or address without a port'],
  ])("refuses %j with a sentence naming the variable", (env, sentence) => {
    expect(() => listenFromEnv(env)).toThrow(sentence);
  });
});

describe("parseListen", () => {
  it("takes the parts --http leaves out from the fallback, and the parts it gives from itself", () => {
    const fallback = { host: "0.0.0.0", port: 8080 };
    expect(parseListen(undefined, fallback)).toEqual(fallback);
    expect(parseListen(":0", fallback)).toEqual({ host: "0.0.0.0", port: 0 });
    expect(parseListen("127.0.0.1", fallback)).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListen("127.0.0.1:3000", fallback)).toEqual({ host: "127.0.0.1", port: 3000 });
    expect(parseListen("", undefined)).toEqual({ host: "127.0.0.1", port: 3920 });
  });
});
