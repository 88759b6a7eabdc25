import { Codemux } from "@codemux/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { config, misbehaving } from "./helpers";

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
