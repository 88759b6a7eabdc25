import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { Authenticator } from "../src/auth/authenticator";
import { FailureLimit } from "../src/auth/failure-limit";
import { HttpError } from "../src/errors";

const TOKEN = "a-static-token-0123456789abcdef";

function authenticator(failures = new FailureLimit()): Authenticator {
  return new Authenticator({
    tokens: [{ name: "alice", token: TOKEN }],
    tokenFile: undefined,
    tokenFilePollMs: 1000,
    publicUrl: undefined,
    oauth: undefined,
    allowQueryToken: false,
    log: () => {},
    onRevoked: () => {},
    failures,
  });
}

const request = (authorization: string) => ({ headers: { authorization } }) as unknown as IncomingMessage;
const target = { url: new URL("http://codemux.invalid/mcp"), path: "/mcp", client: "10.0.0.1" };

describe("Authenticator.authenticate with static tokens", () => {
  it("answers a valid token at once, without a promise (every call's first step)", () => {
    const auth = authenticator().authenticate(request(`Bearer ${TOKEN}`), target);
    expect(auth).not.toBeInstanceOf(Promise);
    expect(auth).toMatchObject({ identity: { principal: "token:alice" }, queryToken: undefined });
  });

  it("throws a wrong token's 401 at once and counts it against the address, which is then held back", () => {
    const failures = new FailureLimit();
    const auth = authenticator(failures);
    let thrown: unknown;
    for (let i = 0; i < 50 && failures.waitMs(target.client) === 0; i++) {
      try {
        void auth.authenticate(request(`Bearer wrong-${i}`), target);
      } catch (error) {
        thrown = error;
      }
    }
    expect(HttpError.isInstance(thrown) && thrown.code).toBe("UNAUTHORIZED");
    expect(failures.waitMs(target.client)).toBeGreaterThan(0);
    expect(() => auth.authenticate(request(`Bearer ${TOKEN}`), target)).toThrow(/wait|retry|many/i);
  });

  it("still proves the identity through identify() as a promise (the admin page's sign-in)", async () => {
    await expect(authenticator().identify(TOKEN, "/ui")).resolves.toMatchObject({ principal: "token:alice" });
    await expect(authenticator().identify("wrong", "/ui")).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
