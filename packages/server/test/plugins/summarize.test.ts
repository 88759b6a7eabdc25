import type { CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { SUMMARIZED_META, summarizePlugin, type ResultKeeper } from "@codemux/hooks";
import { connect, misbehaving, textOf, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const sampled: Array<CreateMessageRequest["params"]> = [];
const sample = (request: CreateMessageRequest["params"]) => {
  sampled.push(request);
  return { model: "test-model", role: "assistant" as const, content: { type: "text" as const, text: "SUMMARY" } };
};

describe("summarize", () => {
  it("has a long result summarized by the client's own model, the full one kept for a second call", async () => {
    sampled.length = 0;
    harness = await connect({ servers: { s: misbehaving() }, plugins: [summarizePlugin({ minChars: 8000 })], sample });
    const result = await harness.call("s__huge", { bytes: 20_000 });
    const text = textOf(result);
    expect(text).toMatch(
      /^SUMMARY\n\n\[codemux\] A summary \(by your client's model test-model\) of a 20,000-character result\. For the full result, call s__huge again with \{"fullResult":"sum_[0-9a-f]{12}"\}\.$/,
    );
    expect(result._meta?.[SUMMARIZED_META]).toBe(true);
    expect(sampled).toHaveLength(1);
    expect(sampled[0]!.includeContext).toBe("none");
    expect((sampled[0]!.messages[0]!.content as { text: string }).text).toContain("x".repeat(1000));

    const handle = /"fullResult":"(sum_[0-9a-f]+)"/.exec(text)![1]!;
    const full = await harness.call("s__huge", { fullResult: handle });
    expect(textOf(full)).toBe("x".repeat(20_000));
    expect(sampled).toHaveLength(1);

    expect(textOf(await harness.call("s__echo", { text: "short" }))).toBe("short");
    expect(textOf(await harness.call("s__huge", { bytes: 20_000, noSummary: true }))).toBe("x".repeat(20_000));
    expect(sampled).toHaveLength(1);
  });

  it("keeps the full result in the host's result store when it has one, for read_result", async () => {
    let keeper: ResultKeeper | undefined;
    const results: ResultKeeper = { keep: (tool, text, owner) => keeper!.keep(tool, text, owner) };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [summarizePlugin()], sample, host: { results } });
    keeper = harness.core.results;
    const text = textOf(await harness.call("s__huge", { bytes: 20_000, lines: true }));
    const handle = /read_result \{"handle":"(res_[0-9a-f]+)"\}/.exec(text)?.[1];
    expect(handle).toBeDefined();
    const stat = textOf(await harness.call("read_result", { handle, op: "stat" }));
    expect(stat).toMatch(/20,0\d\d bytes|20\.\d KB|bytes/);
    const head = textOf(await harness.call("read_result", { handle, op: "head" }));
    expect(head).toContain("line 1: xxxx");
  });

  it("returns the original result when the client cannot sample", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [summarizePlugin()] });
    const result = await harness.call("s__huge", { bytes: 20_000 });
    expect(textOf(result)).toBe("x".repeat(20_000));
    expect(result._meta?.[SUMMARIZED_META]).toBeUndefined();
  });

  it("returns the original result when sampling fails", async () => {
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [summarizePlugin()],
      sample: () => {
        throw new Error("the user refused");
      },
    });
    expect(textOf(await harness.call("s__huge", { bytes: 20_000 }))).toBe("x".repeat(20_000));
  });
});
