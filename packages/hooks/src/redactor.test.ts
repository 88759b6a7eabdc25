import { describe, expect, it } from "vitest";
import { Redactor } from "./redactor";

describe("Redactor.value", () => {
  it("masks every string of a prompt's messages but leaves an image's base64 data as it is", () => {
    // Base64 that happens to hold a key's shape: masking it would break the image.
    const data = "AKIA0123456789ABCDEF/9j/4AAQSkZJRg==";
    const prompt = {
      description: "password=hunter22",
      messages: [
        { role: "user", content: { type: "image", data, mimeType: "image/png" } },
        { role: "user", content: { type: "text", text: "token ghp_0123456789abcdefghijABCDEFGHIJ012345" } },
      ],
    };
    const { value, count } = new Redactor().value(prompt);
    expect(value).toEqual({
      description: "password=[REDACTED:secret-assignment]",
      messages: [
        { role: "user", content: { type: "image", data, mimeType: "image/png" } },
        { role: "user", content: { type: "text", text: "token [REDACTED:github-token]" } },
      ],
    });
    expect(count).toBe(2);
  });
});
