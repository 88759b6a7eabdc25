import { describe, expect, it } from "vitest";
import { isSwitchedOff, redactingLogger, silentLogger, stderrLogger, type Logger } from "./logger";

describe("stderrLogger", () => {
  it("writes lines at its level and above, prefixed and with secrets masked", () => {
    const lines: string[] = [];
    const logger = stderrLogger({ level: "info", prefix: "test", write: (line) => lines.push(line) });
    logger.debug("hidden");
    logger.info("connected to https://x.dev/mcp?apikey=s3cr3t-value");
    logger.error("Authorization: Bearer abcdefghijkl");
    expect(lines).toEqual(["test info: connected to https://x.dev/mcp?apikey=***", "test error: Authorization: Bearer ***"]);
  });

  it("defaults to warn, and a writer that throws (a closed stderr) does not throw into the caller", () => {
    const lines: string[] = [];
    stderrLogger({ write: (line) => lines.push(line) }).info("not at warn");
    expect(lines).toEqual([]);
    const broken = stderrLogger({
      write: () => {
        throw Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
      },
    });
    expect(() => broken.error("lost")).not.toThrow();
  });
});

describe("redactingLogger", () => {
  it("masks every level before the wrapped logger sees it", () => {
    const seen: string[] = [];
    const inner: Logger = { debug: (m) => seen.push(m), info: (m) => seen.push(m), warn: (m) => seen.push(m), error: (m) => seen.push(m) };
    const logger = redactingLogger(inner);
    for (const level of ["debug", "info", "warn", "error"] as const) logger[level](`--token=abc${level}123`);
    expect(seen).toEqual(["--token=***", "--token=***", "--token=***", "--token=***"]);
    expect(() => silentLogger.error("nothing")).not.toThrow();
  });
});

describe("isSwitchedOff", () => {
  it("is true for 0, false and off in any case, and for nothing else", () => {
    for (const value of ["0", "false", "OFF", " off "]) expect(isSwitchedOff(value)).toBe(true);
    for (const value of [undefined, "", "1", "no", "true"]) expect(isSwitchedOff(value)).toBe(false);
  });
});
