// A test-only HTTP forwarder between the conformance referee and codemux. The referee calls the
// fixture's fixed tool and prompt names (`test_simple_text`); codemux names them `<server>__<name>`.
// The shim adds the prefix in requests (body and the Mcp-Name header) and strips it from tool and
// prompt lists in responses (JSON bodies and SSE frames); everything else passes byte for byte,
// Host and Origin included, so codemux's own header checks are what the referee sees.
import { createServer, request } from "node:http";

/** Request bodies above this are refused: the referee sends small JSON-RPC messages. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Methods whose `params.name` (and Mcp-Name header) names a tool or a prompt. */
const NAMED_METHODS = new Set(["tools/call", "prompts/get"]);

/**
 * Which prefix each name gets: `prefix` for every name, but `byName[name]` for the names of a
 * second downstream (the tasks fixture's tools). `of` adds it, `strip` takes it off a listed name.
 */
export function namePrefixes(prefix, byName = {}) {
  const of = (name) => (Object.hasOwn(byName, name) ? byName[name] : prefix);
  const strip = (name) => {
    for (const candidate of new Set([prefix, ...Object.values(byName)])) {
      if (name.startsWith(candidate) && of(name.slice(candidate.length)) === candidate) return name.slice(candidate.length);
    }
    return name;
  };
  return { of, strip };
}

const asPrefixes = (prefix) => (typeof prefix === "string" ? namePrefixes(prefix) : prefix);

/** Adds the prefix (a string, or `namePrefixes`) to the names a client request carries; returns the message changed in place. */
export function prefixRequest(message, prefix) {
  if (!message || typeof message !== "object") return message;
  prefix = asPrefixes(prefix);
  if (Array.isArray(message)) return message.map((m) => prefixRequest(m, prefix));
  const params = message.params;
  if (!params || typeof params !== "object") return message;
  if (NAMED_METHODS.has(message.method) && typeof params.name === "string") params.name = prefix.of(params.name) + params.name;
  if (message.method === "completion/complete" && params.ref?.type === "ref/prompt" && typeof params.ref.name === "string") {
    params.ref.name = prefix.of(params.ref.name) + params.ref.name;
  }
  return message;
}

/** Strips the prefix (a string, or `namePrefixes`) from the tool and prompt names of a list result; returns the message changed in place. */
export function unprefixResponse(message, prefix) {
  if (!message || typeof message !== "object") return message;
  prefix = asPrefixes(prefix);
  if (Array.isArray(message)) return message.map((m) => unprefixResponse(m, prefix));
  for (const key of ["tools", "prompts"]) {
    const items = message.result?.[key];
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      if (typeof item?.name === "string") item.name = prefix.strip(item.name);
    }
  }
  return message;
}

/** Rewrites one JSON text with `rewrite`; text that is not JSON passes unchanged. */
function rewriteJson(text, rewrite) {
  try {
    return JSON.stringify(rewrite(JSON.parse(text)));
  } catch {
    return text;
  }
}

/** Rewrites the data of one SSE event (its lines without the blank line that ends it). */
function rewriteEvent(event, rewrite) {
  const lines = event.split(/\r?\n/);
  const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
  if (data.length === 0) return event;
  const others = lines.filter((line) => !line.startsWith("data:"));
  return [...others, `data: ${rewriteJson(data.join("\n"), rewrite)}`].join("\n");
}

/** Streams an SSE body through, rewriting each complete event as it arrives (streams stay open for long). */
function pipeSse(from, to, rewrite) {
  let pending = "";
  from.setEncoding("utf8");
  from.on("data", (chunk) => {
    pending += chunk;
    const events = pending.split(/\r?\n\r?\n/);
    pending = events.pop();
    for (const event of events) to.write(`${rewriteEvent(event, rewrite)}\n\n`);
  });
  from.on("end", () => to.end(pending));
  from.on("error", () => to.destroy());
}

/** Reads a body up to MAX_BODY_BYTES; resolves undefined when it is larger. */
function readBody(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    stream.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    stream.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

/** Relays one request to `target` (a URL of codemux), rewriting names both ways. */
async function relay({ req, res }, target, prefix) {
  prefix = asPrefixes(prefix);
  const body = await readBody(req);
  if (body === undefined) {
    res.writeHead(413).end("The conformance shim takes request bodies up to 4 MB.");
    return;
  }
  const headers = { ...req.headers };
  let sent = body;
  if (body.length > 0 && String(req.headers["content-type"] ?? "").includes("json")) {
    const text = body.toString("utf8");
    const method = jsonMethod(text);
    sent = Buffer.from(rewriteJson(text, (m) => prefixRequest(m, prefix)));
    if (NAMED_METHODS.has(method) && typeof headers["mcp-name"] === "string") headers["mcp-name"] = prefix.of(headers["mcp-name"]) + headers["mcp-name"];
  }
  if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "DELETE") headers["content-length"] = String(sent.length);
  const upstream = request(new URL(req.url, target), { method: req.method, headers }, (answer) => {
    const type = String(answer.headers["content-type"] ?? "");
    const rewrite = (m) => unprefixResponse(m, prefix);
    const out = { ...answer.headers };
    if (type.includes("text/event-stream")) {
      res.writeHead(answer.statusCode, answer.statusMessage, out);
      res.flushHeaders();
      pipeSse(answer, res, rewrite);
      return;
    }
    if (!type.includes("json")) {
      res.writeHead(answer.statusCode, answer.statusMessage, out);
      answer.pipe(res);
      return;
    }
    readBody(answer).then(
      (data) => {
        const text = data === undefined ? "" : rewriteJson(data.toString("utf8"), rewrite);
        // The body is re-sent whole, so it is measured, not chunked.
        delete out["transfer-encoding"];
        out["content-length"] = String(Buffer.byteLength(text));
        res.writeHead(answer.statusCode, answer.statusMessage, out).end(text);
      },
      () => res.destroy(),
    );
  });
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502).end(`The conformance shim could not reach codemux: ${error.message}`);
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  upstream.end(sent);
}

/** The JSON-RPC method of a request body (the first one of a batch), or undefined. */
function jsonMethod(text) {
  try {
    const message = JSON.parse(text);
    return (Array.isArray(message) ? message[0] : message)?.method;
  } catch {
    return undefined;
  }
}

/** Starts the shim on 127.0.0.1 (a free port) in front of `target`; resolves with its URL and a close function. */
export async function startNameShim({ target, prefix }) {
  const server = createServer((req, res) => {
    relay({ req, res }, target, prefix).catch(() => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
