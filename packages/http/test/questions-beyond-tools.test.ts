import { askingServerPath, modernServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, askableClient, bearer, serve, type Served } from "./helpers";

/**
 * Questions a downstream server asks during prompts/get, resources/read and completion/complete, not
 * only tools/call: a 2026 server's `input_required` and a 2025 server's mid-request question, each
 * under a 2025 client (asked on its session) and a 2026-07-28 client (its own retry answers it).
 */
let s: Served;
beforeAll(async () => {
  s = await serve(
    {},
    {
      m: { command: process.execPath, args: [modernServerPath, "--legacy", "reject", "--ask-beyond-tools"] },
      s: { command: process.execPath, args: [askingServerPath] },
    },
  );
});
afterAll(async () => {
  await s?.close();
});

/** A 2025-era client (SDK 1.x, Streamable HTTP) of alice's that answers every question with `answer`, recording them. */
async function legacy(answer: string): Promise<{ client: Client; asked: string[] }> {
  const client = new Client({ name: "legacy", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { answer } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
  return { client, asked };
}

const promptText = (result: { messages: Array<{ content: unknown }> }) => JSON.parse((result.messages[0]?.content as { text: string }).text);
const resourceText = (result: { contents: Array<Record<string, unknown>> }) => JSON.parse(String(result.contents[0]?.text));
const accepted = (answer: string) => ({ action: "accept", content: { answer } });

describe("a 2026 server that answers a prompt or a resource read with input_required", () => {
  it("is answered by a 2025 client, asked on its own session", async () => {
    const { client, asked } = await legacy("from the 2025 client");
    try {
      expect(promptText(await client.getPrompt({ name: "m__ask", arguments: { message: "for the prompt" } }))).toEqual({
        asked: "for the prompt",
        answer: accepted("from the 2025 client"),
      });
      expect(resourceText(await client.readResource({ uri: "ask://for%20the%20read" }))).toEqual({
        asked: "for the read",
        answer: accepted("from the 2025 client"),
      });
      expect(asked).toEqual(["for the prompt", "for the read"]);
    } finally {
      await client.close();
    }
  });

  it("goes up to a 2026-07-28 client as its own request's input_required, in codemux's signed state, and its retry completes the request", async () => {
    const raw = await askableClient(s.url, TOKENS.alice);
    const answering = await askableClient(s.url, TOKENS.alice, "from the 2026 client");
    try {
      const asked = (await raw.getPrompt({ name: "m__ask", arguments: { message: "raw" } }, { allowInputRequired: true })) as Record<string, unknown>;
      expect(asked).toMatchObject({ resultType: "input_required", inputRequests: { q: { method: "elicitation/create", params: { message: "raw" } } } });
      expect(asked.requestState).toMatch(/^cmx1\./);
      // The state is good for this prompt only, and for this principal only.
      const bob = await askableClient(s.url, TOKENS.bob);
      const retry = { name: "m__ask", arguments: { message: "raw" }, inputResponses: { q: accepted("x") }, requestState: asked.requestState } as never;
      await expect(bob.getPrompt(retry)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("not issued to this caller") });
      await bob.close();
      expect(promptText(await raw.getPrompt(retry))).toEqual({ asked: "raw", answer: accepted("x") });

      expect(promptText(await answering.getPrompt({ name: "m__ask", arguments: { message: "for the prompt" } }))).toEqual({
        asked: "for the prompt",
        answer: accepted("from the 2026 client"),
      });
      expect(resourceText(await answering.readResource({ uri: "ask://for%20the%20read" }))).toEqual({
        asked: "for the read",
        answer: accepted("from the 2026 client"),
      });
    } finally {
      await Promise.all([raw.close(), answering.close()]);
    }
  });
});

describe("a 2025 server that asks during a prompt, a resource read or a completion", () => {
  it("asks the 2025 client whose request it is", async () => {
    const { client, asked } = await legacy("yes");
    try {
      expect(promptText(await client.getPrompt({ name: "s__ask", arguments: { message: "prompt?" } }))).toEqual(accepted("yes"));
      expect(resourceText(await client.readResource({ uri: "asking://ask/read%3F" }))).toEqual(accepted("yes"));
      const completed = await client.complete({ ref: { type: "ref/prompt", name: "s__ask" }, argument: { name: "message", value: "comp" } });
      expect(completed.completion.values.map((value) => JSON.parse(value))).toEqual([accepted("yes")]);
      expect(asked).toEqual(["prompt?", "read?", "complete comp"]);
    } finally {
      await client.close();
    }
  });

  it("parks a 2026-07-28 client's prompt or resource read on the question until its retry; a completion, which may not ask, says so", async () => {
    const client: ModernClient = await askableClient(s.url, TOKENS.alice, "parked yes");
    try {
      expect(promptText(await client.getPrompt({ name: "s__ask", arguments: { message: "prompt?" } }))).toEqual(accepted("parked yes"));
      expect(resourceText(await client.readResource({ uri: "asking://ask/read%3F" }))).toEqual(accepted("parked yes"));
      expect(s.core.sessions.parkedCalls.size).toBe(0);
      await expect(client.complete({ ref: { type: "ref/prompt", name: "s__ask" }, argument: { name: "message", value: "comp" } })).rejects.toThrow(
        /codemux cannot send elicitation\/create to this client: it speaks MCP 2026-07-28/,
      );
    } finally {
      await client.close();
    }
  });
});
