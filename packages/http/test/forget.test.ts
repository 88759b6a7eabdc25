import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, serve, type Served } from "./helpers";

const T = { admin: "admin-forget-token-0123", alice: "alice-forget-token-4567", bob: "bob-forget-token-89ab" };

describe("DELETE /v1/principals/{principal}", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({
      tokens: [
        { name: "admin", token: T.admin, scopes: ["admin"] },
        { name: "alice", token: T.alice, scopes: [] },
        { name: "bob", token: T.bob, scopes: [] },
      ],
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** A large call result, kept for the caller: its handle. */
  async function keptBy(token: string): Promise<string> {
    const response = await fetch(`${s.url}/v1/tools/m__huge/call`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ bytes: 100_000 }),
    });
    const body = await json(response);
    return (body.spilled as { handle: string }).handle;
  }

  it("deletes what the gateway keeps for one principal (its kept results), and nothing of another's", async () => {
    const [alices, bobs] = [await keptBy(T.alice), await keptBy(T.bob)];
    expect(alices).toMatch(/^res_/);
    const forgotten = await fetch(`${s.url}/v1/principals/${encodeURIComponent("token:alice")}`, { method: "DELETE", headers: bearer(T.admin) });
    expect(forgotten.status).toBe(200);
    expect(await json(forgotten)).toEqual({ principal: "token:alice", forgotten: { results: 1, skills: 0, activity: 1 } });
    expect((await fetch(`${s.url}/v1/results/${alices}`, { headers: bearer(T.alice) })).status).toBe(404);
    expect((await fetch(`${s.url}/v1/results/${bobs}`, { headers: bearer(T.bob) })).status).toBe(200);
    expect(s.logs.some((line) => line.forgot === "token:alice")).toBe(true);
  });

  it("takes a bare name as the token's principal: DELETE /v1/principals/bob forgets token:bob", async () => {
    const bobs = await keptBy(T.bob);
    const forgotten = await fetch(`${s.url}/v1/principals/bob`, { method: "DELETE", headers: bearer(T.admin) });
    expect(await json(forgotten)).toMatchObject({ principal: "token:bob", forgotten: { results: 2 } });
    expect((await fetch(`${s.url}/v1/results/${bobs}`, { headers: bearer(T.bob) })).status).toBe(404);
  });

  it("needs the admin scope: another principal gets 403 naming it, and cannot forget even itself through the gateway", async () => {
    const bobs = await keptBy(T.bob);
    for (const target of ["token:alice", "token:bob"]) {
      const refused = await fetch(`${s.url}/v1/principals/${encodeURIComponent(target)}`, { method: "DELETE", headers: bearer(T.bob) });
      expect(refused.status).toBe(403);
      expect(JSON.stringify(await json(refused))).toContain('Forgetting a principal needs the \\"admin\\" scope');
    }
    expect((await fetch(`${s.url}/v1/results/${bobs}`, { headers: bearer(T.bob) })).status).toBe(200);
  });

  it("takes DELETE only, and refuses a principal with control characters", async () => {
    expect((await fetch(`${s.url}/v1/principals/token%3Aalice`, { headers: bearer(T.admin) })).status).toBe(405);
    const bad = await fetch(`${s.url}/v1/principals/a%01b`, { method: "DELETE", headers: bearer(T.admin) });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await json(bad))).toContain("is not a principal");
  });
});
