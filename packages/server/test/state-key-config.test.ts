import { describe, expect, it } from "vitest";
import { stateKeyOf } from "../src/index";

const KEY = "0123456789abcdef0123456789abcdef";

describe("stateKeyOf: the config's stateKey", () => {
  it("expands ${VAR} from the environment, and is undefined when the config has none", () => {
    expect(stateKeyOf({ stateKey: "${K}" }, "c.json", { K: KEY })).toBe(KEY);
    expect(stateKeyOf({ stateKey: "${K:-fallback}-${K}" }, "c.json", { K: KEY })).toBe(`${KEY}-${KEY}`);
    expect(stateKeyOf({ mcpServers: {} }, "c.json", {})).toBeUndefined();
  });

  it("refuses what is not a usable key with a sentence naming the file and the field", () => {
    expect(() => stateKeyOf({ stateKey: 42 }, "c.json", {})).toThrow('Invalid config c.json: stateKey: expected a string, such as "${CODEMUX_STATE_KEY}"');
    expect(() => stateKeyOf({ stateKey: "${input:key}" }, "c.json", {})).toThrow("stateKey: ${input:key} cannot be expanded here");
    expect(() => stateKeyOf({ stateKey: "${NOT_SET}" }, "c.json", {})).toThrow("stateKey: the environment variable NOT_SET is not set");
    expect(() => stateKeyOf({ stateKey: "short" }, "c.json", {})).toThrow("stateKey: the key must be at least 32 bytes");
  });
});
