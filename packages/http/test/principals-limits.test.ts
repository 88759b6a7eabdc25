import { Codemux } from "@codemux/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { TOKENS, config, misbehaving, raw, serve, type Served } from "./helpers";

describe("reserved principals", () => {
  let core: Codemux;
  beforeAll(() => {
    core = new Codemux({ config: config({ m: misbehaving() }) });
  });
  afterAll(async () => {
    await core.close();
  });

  it("refuses a token named after the stdio owner or the no-auth caller, in any case, with a sentence that says what to do", () => {
    for (const name of ["local", "Local", "LOCAL", "anonymous", "Anonymous"]) {
      expect(() => new CodemuxHttpServer(core, { port: 0, tokens: [{ name, token: "a-long-enough-token-0123" }] })).toThrow(
        `Token name "${name}" is reserved: "local" is the owner's own principal over stdio and "anonymous" is every caller without a token; name the token after its holder (e.g. laptop:TOKEN).`,
      );
    }
  });
});

describe("secrets in the access log", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("masks a query token whose parameter name is percent-encoded, as authentication decodes it", async () => {
    for (const name of ["api%6Bey", "%61%70%69%6b%65%79", "apikey"]) {
      const res = await raw(`${s.url}/v1/tools?${name}=${TOKENS.alice}&limit=1`);
      expect(res.status).toBe(200);
      const line = s.logs.find((l) => l.msg === "request" && l.requestId === res.headers["x-request-id"]);
      expect(line).toMatchObject({ principal: "alice", path: "/v1/tools?apikey=***&limit=1" });
    }
    expect(JSON.stringify(s.logs)).not.toContain(TOKENS.alice);
  });
});
