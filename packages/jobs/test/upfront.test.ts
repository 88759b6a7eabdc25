import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type Harness } from "./helpers";

/**
 * The upfront tool list in mode code as `codemux serve` runs it (skills and jobs on), the fixed cost every
 * session pays before the user types (SPEC §5; issue 19 is judged with "the upfront tool list does not grow").
 * Budget: 645 o200k tokens. When pinned: 2,615 JSON characters = 623 o200k tokens (~4.2 characters a token;
 * `pnpm bench` counts the real tokens). The bound is the budget in characters: growing past it needs a decision.
 */
const BUDGET_CHARS = 2_700;
const CODE_MODE = ["search_tools", "list_modules", "read_module", "execute_code", "call_tool", "read_result", "save_skill", "jobs"];

let h: Harness;
beforeAll(async () => {
  h = await connect();
});
afterAll(async () => {
  await h.close();
});

describe("the upfront tool list with jobs", () => {
  it("is the meta-tools, one for jobs, within the token budget for a client without sampling", async () => {
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(CODE_MODE);
    expect(JSON.stringify(tools).length).toBeLessThanOrEqual(BUDGET_CHARS);
  });

  it("adds the agent for a client that declared sampling, and only for it", async () => {
    const sampling = await h.other("local", new Client({ name: "sampler", version: "1.0.0" }, { capabilities: { sampling: { tools: {} } } }));
    const { tools } = await sampling.listTools();
    expect(tools.map((t) => t.name)).toEqual([...CODE_MODE, "agent"]);
    // The agent's own size stays small too: about 120 tokens when pinned.
    expect(JSON.stringify(tools.find((t) => t.name === "agent")).length).toBeLessThanOrEqual(600);
  });
});
