import { describe, expect, it } from "vitest";
import { parseToolBlocks } from "./agent";

describe("the agent's text protocol", () => {
  it("reads text-protocol blocks, and reports a malformed one instead of running it", () => {
    const blocks = parseToolBlocks('```tool\n{"name":"search_tools","arguments":{"query":"x"}}\n```\n```tool\nnot json\n```');
    expect(blocks[0]).toEqual({ id: "t1", name: "search_tools", input: { query: "x" } });
    expect(blocks[1]).toMatchObject({ id: "t2", error: expect.stringMatching(/not valid JSON/) });
  });
});
