// The conformance run's name shim (scripts/conformance/name-shim.mjs) against a real HTTP server that
// records what reaches it: names prefixed on the way in (body and Mcp-Name), lists unprefixed on the
// way out (JSON and SSE, an event split across chunks too), everything else byte for byte.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { namePrefixes, prefixRequest, startNameShim, unprefixResponse } from "../conformance/name-shim.mjs";

const PREFIX = "everything__";
/** What the target server saw last: method, url, headers, body text. */
let seen;
/** How the target answers the next request: a function of (req, res). */
let answer;
let target;
let shim;

before(async () => {
  target = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      seen = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      answer(req, res);
    });
  });
  await new Promise((resolve) => target.listen(0, "127.0.0.1", resolve));
  shim = await startNameShim({ target: `http://127.0.0.1:${target.address().port}`, prefix: PREFIX });
});

after(async () => {
  await shim.close();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
});

const json = (body) => (req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
const post = (message, headers = {}) =>
  fetch(`${shim.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(message) });

describe("conformance name shim", () => {
  test("prefixes a tools/call's name and its Mcp-Name header", async () => {
    answer = json({ jsonrpc: "2.0", id: 1, result: { content: [] } });
    await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "test_simple_text", arguments: {} } }, { "mcp-name": "test_simple_text" });
    assert.equal(JSON.parse(seen.body).params.name, "everything__test_simple_text");
    assert.equal(seen.headers["mcp-name"], "everything__test_simple_text");
    assert.equal(Number(seen.headers["content-length"]), Buffer.byteLength(seen.body));
  });

  test("prefixes a prompts/get's name and a completion's prompt ref, not a resource ref", async () => {
    answer = json({ jsonrpc: "2.0", id: 2, result: {} });
    await post({ jsonrpc: "2.0", id: 2, method: "prompts/get", params: { name: "test_simple_prompt" } });
    assert.equal(JSON.parse(seen.body).params.name, "everything__test_simple_prompt");
    await post({ jsonrpc: "2.0", id: 3, method: "completion/complete", params: { ref: { type: "ref/prompt", name: "p" } } });
    assert.equal(JSON.parse(seen.body).params.ref.name, "everything__p");
    await post({ jsonrpc: "2.0", id: 4, method: "completion/complete", params: { ref: { type: "ref/resource", uri: "test://x" } } });
    assert.deepEqual(JSON.parse(seen.body).params.ref, { type: "ref/resource", uri: "test://x" });
  });

  test("leaves other methods' names and headers alone, Host included", async () => {
    answer = json({ jsonrpc: "2.0", id: 5, result: {} });
    const message = { jsonrpc: "2.0", id: 5, method: "resources/read", params: { name: "x", uri: "test://static-text" } };
    await post(message, { "mcp-name": "test://static-text" });
    assert.deepEqual(JSON.parse(seen.body), message);
    assert.equal(seen.headers["mcp-name"], "test://static-text");
    assert.equal(seen.headers.host, new URL(shim.url).host);
  });

  test("strips the prefix from the tools and prompts of a JSON list result", async () => {
    answer = json({
      jsonrpc: "2.0",
      id: 6,
      result: { tools: [{ name: "everything__test_simple_text" }, { name: "read_result" }], prompts: [{ name: "everything__p" }] },
    });
    const body = await (await post({ jsonrpc: "2.0", id: 6, method: "tools/list" })).json();
    assert.deepEqual(
      body.result.tools.map((t) => t.name),
      ["test_simple_text", "read_result"],
    );
    assert.deepEqual(
      body.result.prompts.map((p) => p.name),
      ["p"],
    );
  });

  test("strips the prefix in SSE frames, an event split across chunks too, and keeps the other frames", async () => {
    answer = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const list = JSON.stringify({ jsonrpc: "2.0", id: 7, result: { tools: [{ name: "everything__a" }] } });
      res.write(`event: message\nid: 1\ndata: ${list.slice(0, 20)}`);
      setImmediate(() => res.end(`${list.slice(20)}\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n`));
    };
    const text = await (await post({ jsonrpc: "2.0", id: 7, method: "tools/list" })).text();
    const events = text.split("\n\n").filter(Boolean);
    assert.equal(events.length, 2);
    assert.match(events[0], /^event: message\nid: 1\n/);
    assert.deepEqual(JSON.parse(events[0].split("data: ")[1]).result.tools, [{ name: "a" }]);
    assert.equal(JSON.parse(events[1].split("data: ")[1]).method, "notifications/progress");
  });

  test("passes a non-JSON answer and its status through unchanged", async () => {
    answer = (req, res) => res.writeHead(403, { "content-type": "text/plain" }).end("Forbidden host");
    const response = await post({ jsonrpc: "2.0", id: 8, method: "tools/list" });
    assert.equal(response.status, 403);
    assert.equal(await response.text(), "Forbidden host");
  });
});

describe("conformance name shim with a second downstream's names", () => {
  const prefixes = namePrefixes(PREFIX, { greet: "tasks__" });

  test("a name of the second downstream gets its prefix, every other name the default one", () => {
    const call = prefixRequest({ method: "tools/call", params: { name: "greet" } }, prefixes);
    assert.equal(call.params.name, "tasks__greet");
    assert.equal(prefixRequest({ method: "tools/call", params: { name: "test_simple_text" } }, prefixes).params.name, "everything__test_simple_text");
  });

  test("a list loses each name's own prefix, and only that one", () => {
    const tools = [{ name: "tasks__greet" }, { name: "everything__test_simple_text" }, { name: "everything__greet" }, { name: "tasks__other" }];
    const listed = unprefixResponse({ result: { tools } }, prefixes).result.tools.map((tool) => tool.name);
    assert.deepEqual(listed, ["greet", "test_simple_text", "everything__greet", "tasks__other"]);
  });
});
