import { describe, expect, it } from "vitest";
import { joinedText, otherContentKinds, textResult, toolResultValue, toolValueAnswer } from "./result";

describe("toolResultValue", () => {
  it("prefers structuredContent, then JSON text, then text, then the content array", () => {
    expect(toolResultValue({ structuredContent: { a: 1 }, content: [{ type: "text", text: "ignored" }] })).toEqual({ a: 1 });
    expect(
      toolResultValue({
        content: [
          { type: "text", text: '{"b":' },
          { type: "text", text: "2}" },
        ],
      }),
    ).toEqual({ b: 2 });
    expect(toolResultValue(textResult("plain words"))).toBe("plain words");
    const image = { type: "image", data: "AAAA", mimeType: "image/png" };
    expect(toolResultValue({ content: [image] })).toEqual([image]);
  });

  it("names the parts the value leaves out", () => {
    const result = { content: [{ type: "text", text: "a" }, { type: "image" }, { type: "resource_link" }] };
    expect(joinedText(result)).toBe("a");
    expect(otherContentKinds(result)).toEqual(["image", "resource_link"]);
  });
});

describe("toolValueAnswer", () => {
  it("answers the value, a warning for the parts left out, or the error's message and result", () => {
    expect(toolValueAnswer("a__b", { content: [{ type: "text", text: '{"n":1}' }] })).toEqual({ value: { n: 1 } });
    expect(
      toolValueAnswer("a__b", {
        content: [
          { type: "text", text: "x" },
          { type: "image", text: undefined },
        ],
      }),
    ).toEqual({ value: "x", warning: 'a__b also returned image content; callToolRaw("a__b", args) from "mcp/bridge" returns every part.' });
    const failed = { content: [{ type: "text", text: "no such file" }], isError: true };
    expect(toolValueAnswer("fs__read", failed)).toEqual({ error: { message: "fs__read: no such file", result: failed } });
    expect(toolValueAnswer("fs__read", { content: [], isError: true })).toMatchObject({
      error: { message: "fs__read: the tool reported an error without a message" },
    });
  });
});
