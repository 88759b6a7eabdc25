import { askingServerPath } from "@codemux/test-servers";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { ServerPool, type CallerSession, type ServerRequestRelay } from "../src/index";
import { cleanedAfterEach, httpSpec, textOf } from "./helpers";

const { pools, children } = cleanedAfterEach();

/** The asking server over Streamable HTTP (a 2025 one), in a pool whose relay answers each question with the id of the caller it was named for. */
async function askingPool(): Promise<{ pool: ServerPool; named: Array<string | undefined> }> {
  const child = spawn(process.execPath, [askingServerPath, "--http", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  const [chunk] = (await once(child.stdout, "data")) as [Buffer];
  const url = `http://127.0.0.1:${/listening (\d+)/.exec(chunk.toString())?.[1]}/mcp`;
  const named: Array<string | undefined> = [];
  const relay: ServerRequestRelay = {
    capabilities: { elicitation: {} },
    handle: async (_server, _request, { caller }) => {
      named.push(caller?.id);
      return { action: "accept", content: { answer: caller?.id ?? "no one" } };
    },
  };
  const pool = new ServerPool([httpSpec("h", url)], { relay, retryDelaysMs: [] });
  pools.push(pool);
  await pool.start();
  return { pool, named };
}

const answerOf = (text: string) => (JSON.parse(text) as { content: { answer: string } }).content.answer;

describe("a question a 2025 server sends on the stream of the request it is about (Streamable HTTP)", () => {
  it("reaches the relay with the caller that request was made for, whichever calls run at once; one on the standalone stream names none", async () => {
    const { pool } = await askingPool();
    const alice: CallerSession = { id: "alice-1", principal: "alice" };
    const bob: CallerSession = { id: "bob-1", principal: "bob" };
    const answers = await Promise.all([
      pool.callTool("h", "ask", { message: "a" }, { session: alice }),
      pool.callTool("h", "ask", { message: "b" }, { session: bob }),
      pool.callTool("h", "ask", { message: "c", stream: "standalone" }, { session: bob }),
      pool.request("h", { method: "prompts/get", params: { name: "ask", arguments: { message: "p" } } }, { session: alice }),
      pool.request("h", { method: "resources/read", params: { uri: "asking://ask/r" } }, { session: bob }),
      pool.request(
        "h",
        { method: "completion/complete", params: { ref: { type: "ref/prompt", name: "ask" }, argument: { name: "message", value: "x" } } },
        { session: alice },
      ),
    ]);
    const [a, b, c, prompt, read, completion] = answers as [
      { content: unknown },
      { content: unknown },
      { content: unknown },
      { messages: Array<{ content: { text: string } }> },
      { contents: Array<{ text: string }> },
      { completion: { values: string[] } },
    ];
    expect([a, b, c].map((result) => answerOf(textOf(result)))).toEqual(["alice-1", "bob-1", "no one"]);
    expect(answerOf(prompt.messages[0]?.content.text ?? "")).toBe("alice-1");
    expect(answerOf(read.contents[0]?.text ?? "")).toBe("bob-1");
    expect(answerOf(completion.completion.values[0] ?? "")).toBe("alice-1");
  });

  it("names no caller for a call made without one", async () => {
    const { pool, named } = await askingPool();
    expect(answerOf(textOf(await pool.callTool("h", "ask", { message: "anonymous" })))).toBe("no one");
    expect(named).toEqual([undefined]);
  });
});
