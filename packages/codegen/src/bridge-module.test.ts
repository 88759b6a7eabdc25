import { HOST_CALL } from "../test/tools";
import { runInNewContext } from "node:vm";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { typeCheck } from "../test/typecheck";
import { renderBridgeModule } from "./bridge-module";
import { toolResultValue, toolValueAnswer, VALUE_CALL_SUFFIX } from "@codemux/core";

interface Bridge {
  callTool(name: string, args: unknown): Promise<unknown>;
  callToolRaw(name: string, args: unknown): Promise<unknown>;
  ToolError: new (...args: never[]) => Error & { tool: string; result: unknown };
}

/**
 * Strips the bridge's types down to ES2020 and runs it in a fresh realm that has only the language's
 * built-ins and `__host_call`, as the sandbox does: a reference to any Node API would fail here.
 */
function loadBridge(hostCall: (name: string, args: unknown) => Promise<unknown>, warnings: unknown[][] = []): Bridge {
  const { outputText } = ts.transpileModule(renderBridgeModule(HOST_CALL), {
    compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS },
  });
  const exports = {};
  runInNewContext(outputText, { exports, __host_call: hostCall, console: { warn: (...values: unknown[]) => warnings.push(values) } });
  return exports as Bridge;
}

/** The host as the server's snippet host answers: the raw result, or for a value call the value answer made from it. */
function asHost(result: unknown): (name: string) => Promise<unknown> {
  return async (name) =>
    name.endsWith(VALUE_CALL_SUFFIX) ? toolValueAnswer(name.slice(0, -VALUE_CALL_SUFFIX.length), result as Parameters<typeof toolValueAnswer>[1]) : result;
}

function hostReturning(result: unknown) {
  const calls: { name: string; args: unknown }[] = [];
  const answer = asHost(result);
  const bridge = loadBridge(async (name, args) => {
    calls.push({ name, args });
    return answer(name);
  });
  return { bridge, calls };
}

describe("mcp/bridge", () => {
  it("passes the qualified name and arguments to __host_call, callTool asking for the value", async () => {
    const { bridge, calls } = hostReturning({ content: [{ type: "text", text: "ok" }] });
    await bridge.callTool("fs__read_text_file", { path: "a.txt" });
    await bridge.callToolRaw("fs__read_text_file", { path: "b.txt" });
    expect(calls).toEqual([
      { name: `fs__read_text_file${VALUE_CALL_SUFFIX}`, args: { path: "a.txt" } },
      { name: "fs__read_text_file", args: { path: "b.txt" } },
    ]);
  });

  it("forwards the host's value without reading the result itself", async () => {
    const bridge = loadBridge(async () => ({ value: "the host's value" }));
    expect(await bridge.callTool("x__y", {})).toBe("the host's value");
  });

  it("returns structuredContent when present, whatever the text says", async () => {
    const { bridge } = hostReturning({ content: [{ type: "text", text: '{"other":1}' }], structuredContent: { content: "hello" } });
    expect(await bridge.callTool("fs__read_text_file", {})).toEqual({ content: "hello" });
  });

  it("parses text content that is JSON, joining text parts with newlines", async () => {
    const { bridge } = hostReturning({
      content: [
        { type: "text", text: '{"entities":' },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: '[{"name":"a"}]}' },
      ],
    });
    expect(await bridge.callTool("memory__read_graph", {})).toEqual({ entities: [{ name: "a" }] });
    const { bridge: numbers } = hostReturning({ content: [{ type: "text", text: "42" }] });
    expect(await numbers.callTool("x__n", {})).toBe(42);
  });

  it("returns text that is not JSON as the joined text", async () => {
    const { bridge } = hostReturning({
      content: [
        { type: "text", text: "line one" },
        { type: "text", text: "line two" },
      ],
    });
    expect(await bridge.callTool("everything__echo", {})).toBe("line one\nline two");
  });

  it("returns the content array when there is no text part", async () => {
    const content = [{ type: "image", data: "AAAA", mimeType: "image/png" }];
    const { bridge } = hostReturning({ content });
    expect(await bridge.callTool("everything__get_tiny_image", {})).toEqual(content);
  });

  it("throws a ToolError carrying the server's message when isError is set", async () => {
    const result = { content: [{ type: "text", text: "ENOENT: no such file" }], isError: true };
    const { bridge } = hostReturning(result);
    const error = await bridge.callTool("fs__read_text_file", { path: "nope" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(bridge.ToolError);
    expect(error).toMatchObject({ name: "ToolError", tool: "fs__read_text_file", result, message: "fs__read_text_file: ENOENT: no such file" });
  });

  it("gives a ToolError a message even when the server sent none", async () => {
    const { bridge } = hostReturning({ content: [], isError: true });
    await expect(bridge.callTool("x__y", {})).rejects.toThrow("x__y: the tool reported an error without a message");
  });

  it("callToolRaw resolves with the raw result, errors included", async () => {
    const result = { content: [{ type: "text", text: "bad" }], isError: true };
    const { bridge } = hostReturning(result);
    expect(await bridge.callToolRaw("x__y", {})).toEqual(result);
  });

  it("passes on a rejection from the host (such as failed argument validation)", async () => {
    const bridge = loadBridge(async () => {
      throw new Error("path: Required");
    });
    await expect(bridge.callTool("fs__read_text_file", {})).rejects.toThrow("path: Required");
  });

  it("type-checks as a module and exports the result types", () => {
    const use = `import { callTool, callToolRaw, ToolError, type CallToolResult, type ContentBlock } from "mcp/bridge";
const raw: Promise<CallToolResult> = callToolRaw("a__b", {});
const value: Promise<unknown> = callTool("a__b", {});
const blocks: ContentBlock[] = [{ type: "text", text: "x" }];
const isToolError = (e: unknown): string | undefined => (e instanceof ToolError ? e.tool : undefined);
export { raw, value, blocks, isToolError };
`;
    expect(typeCheck({ "mcp/bridge": renderBridgeModule(HOST_CALL), use })).toEqual([]);
  });

  it("resolves with the value toolResultValue gives, for every shape of result", async () => {
    const cases = [
      { content: [{ type: "text", text: '{"a":1}' }], structuredContent: { b: 2 } },
      {
        content: [
          { type: "text", text: '{"a":' },
          { type: "text", text: "1}" },
        ],
      },
      { content: [{ type: "text", text: "plain words" }] },
      { content: [{ type: "text", text: "42" }] },
      { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
      { content: [] },
      { content: [{ type: "text", text: "null" }], structuredContent: null },
    ];
    for (const result of cases) {
      const { bridge } = hostReturning(result);
      expect(await bridge.callTool("x__y", {})).toEqual(toolResultValue(result));
    }
  });

  it("says on stderr when the value leaves out an image beside the text, and callToolRaw still has it", async () => {
    const warnings: unknown[][] = [];
    const result = {
      content: [
        { type: "text", text: "a chart" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
    };
    const bridge = loadBridge(asHost(result), warnings);
    expect(await bridge.callTool("charts__draw", {})).toBe("a chart");
    expect(String(warnings[0]?.[0])).toContain("charts__draw also returned image content");
    expect(await bridge.callToolRaw("charts__draw", {})).toEqual(result);
  });
});
