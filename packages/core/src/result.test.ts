import { describe, expect, it } from "vitest";
import { joinedText, otherContentKinds, textResult, toolResultValue } from "./result";

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
