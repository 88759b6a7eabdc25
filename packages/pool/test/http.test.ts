import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { PassThrough } from "node:stream";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DownstreamError, ServerPool, ServerUnavailableError, type PoolOptions, type ServerSpec, type TlsSettings } from "../src/index";
import { freePort, httpSpec, recordingLogger, startHttpServer, textOf } from "./helpers";

const require = createRequire(import.meta.url);
const pools: ServerPool[] = [];
const children: ChildProcess[] = [];
const servers: Server[] = [];
const sockets: Socket[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  children.splice(0).forEach((c) => c.kill());
  sockets.splice(0).forEach((s) => s.destroy());
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((resolve) => {
          s.closeAllConnections?.();
          s.close(resolve);
        }),
    ),
  );
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function startPool(specs: ServerSpec[], options: PoolOptions = {}): Promise<ServerPool> {
  const pool = new ServerPool(specs, { retryDelaysMs: [10, 20], ...options });
  pools.push(pool);
  await pool.start();
  return pool;
}

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Forwards one request to `target` (host:port) and pipes the answer back. */
function forward(req: IncomingMessage, res: ServerResponse, target: URL, body?: Buffer): void {
  const { connection: _c, "proxy-authorization": _p, "keep-alive": _k, ...headers } = req.headers;
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: `${target.pathname}${target.search}`, headers, agent: false },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => res.destroy());
  if (body) upstream.end(body);
  else req.pipe(upstream);
}

describe("HTTP servers that cannot be reached or answer with errors", () => {
  it("names the URL and the cause of an unreachable server, masking its secrets everywhere", async () => {
    const port = await freePort();
    const { lines, logger } = recordingLogger();
    const pool = await startPool([httpSpec("gone", `http://127.0.0.1:${port}/mcp?apikey=SUPERSECRET1`, {}, { Authorization: "Bearer SUPERSECRET2" })], {
      logger,
    });
    const status = pool.status()[0]!;
    expect(status).toMatchObject({
      state: "failed",
      error: `cannot reach http://127.0.0.1:${port}/mcp?apikey=***: connection refused (connect ECONNREFUSED 127.0.0.1:${port})`,
    });
    expect(status.endpoint).toBe(`http http://127.0.0.1:${port}/mcp?apikey=*** (headers: Authorization)`);
    const error = await pool.callTool("gone", "echo", { text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerUnavailableError);
    const everything = [JSON.stringify(pool.status()), (error as Error).message, ...lines].join("\n");
    expect(everything).toContain("ECONNREFUSED");
    expect(everything).not.toMatch(/SUPERSECRET/);
  });

  it("summarizes an HTML 404 page as status, URL and title, never markup", async () => {
    const port = await listen(
      createHttpServer((_req, res) => {
        res
          .writeHead(404, { "content-type": "text/html" })
          .end(`<!DOCTYPE html><html><head><title>Not Here</title></head><body>${"<p>filler</p>".repeat(500)}</body></html>`);
      }),
    );
    const pool = await startPool([httpSpec("html", `http://127.0.0.1:${port}/wrong`)]);
    const error = pool.status()[0]!.error!;
    expect(error).toBe(
      `HTTP 404 Not Found from http://127.0.0.1:${port}/wrong: Not Here (check the URL's path (often /mcp, or /sse for the legacy transport))`,
    );
  });

  it("says a 405 may mean the wrong transport", async () => {
    const port = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(405, { "content-type": "text/plain" }).end("Method Not Allowed");
      }),
    );
    const pool = await startPool([httpSpec("sse-only", `http://127.0.0.1:${port}/sse`)]);
    expect(pool.status()[0]!.error).toBe(
      `HTTP 405 Method Not Allowed from http://127.0.0.1:${port}/sse (the URL may point at the wrong transport (try "type": "sse" or "http"))`,
    );
  });

  it("turns a server's JSON-RPC error into a DownstreamError with its code and its own words", async () => {
    const url = await startHttpServer(children);
    const pool = await startPool([httpSpec("h", `${url}/mcp`)]);
    const error = (await pool.callTool("h", "throw", { message: "no such file" }).catch((e: unknown) => e)) as DownstreamError;
    expect(error).toBeInstanceOf(DownstreamError);
    expect(error.message).toBe("h__throw failed: no such file");
    expect(error.data).toMatchObject({ rpcCode: -32603 });
  });
});

describe("downstream HTTP through a proxy", () => {
  /** A forward proxy (absolute-form requests) that also tunnels CONNECT, recording what went through. */
  async function startProxy(): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const proxy = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      forward(req, res, new URL(req.url!));
    });
    proxy.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
      seen.push(`CONNECT ${req.url}`);
      sockets.push(socket);
      const [host, port] = req.url!.split(":");
      const upstream = connect(Number(port), host!, () => {
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      sockets.push(upstream);
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
      socket.on("close", () => upstream.destroy());
      upstream.on("close", () => socket.destroy());
    });
    return { url: `http://127.0.0.1:${await listen(proxy)}`, seen };
  }

  it('sends Streamable HTTP through HTTP_PROXY, and not for NO_PROXY hosts or a server with "proxy": false', async () => {
    const base = await startHttpServer(children);
    const proxy = await startProxy();
    const env = { ...process.env, HTTP_PROXY: proxy.url, NO_PROXY: "" };
    const pool = await startPool(
      [httpSpec("via", `${base}/mcp`), httpSpec("direct", `${base}/mcp`, {}, {})].map((s, i) =>
        i === 1 ? ({ ...s, transport: { ...s.transport, proxy: false } } as ServerSpec) : s,
      ),
      { env },
    );
    expect(textOf(await pool.callTool("via", "echo", { text: "through the proxy" }))).toBe("through the proxy");
    expect(textOf(await pool.callTool("direct", "echo", { text: "around it" }))).toBe("around it");
    const posts = proxy.seen.filter((s) => s === `POST ${base}/mcp`);
    expect(posts.length).toBeGreaterThanOrEqual(2);
    const before = proxy.seen.length;
    const bypass = await startPool([httpSpec("bypass", `${base}/mcp`)], { env: { ...env, NO_PROXY: "127.0.0.1" } });
    expect(textOf(await bypass.callTool("bypass", "echo", { text: "no proxy" }))).toBe("no proxy");
    expect(proxy.seen.length).toBe(before);
  });

  it("streams a legacy SSE server's events through the proxy", async () => {
    const port = await freePort();
    const everything = join(dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");
    const child = spawn(process.execPath, [everything, "sse"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    await new Promise<void>((resolve) => child.stderr!.on("data", (d: Buffer) => d.toString().includes("running on port") && resolve()));
    const proxy = await startProxy();
    const spec: ServerSpec = {
      name: "legacy",
      transport: { type: "sse", url: `http://127.0.0.1:${port}/sse`, headers: {} },
      callTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      tools: {},
    };
    const pool = await startPool([spec], { env: { ...process.env, HTTP_PROXY: proxy.url } });
    expect(textOf(await pool.callTool("legacy", "echo", { message: "over sse, via the proxy" }))).toContain("over sse, via the proxy");
    expect(proxy.seen).toContain(`GET http://127.0.0.1:${port}/sse`);
    expect(proxy.seen.some((s) => s.startsWith(`POST http://127.0.0.1:${port}/message`))).toBe(true);
  });

  it('tunnels HTTPS through HTTPS_PROXY with CONNECT, and a server\'s own "proxy" wins over the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), "codemux-tls-"));
    dirs.push(dir);
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    const base = new URL(await startHttpServer(children));
    // An HTTPS front for the misbehaving server, with a self-signed certificate.
    const tlsPort = await listen(
      createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (req, res) =>
        forward(req, res, new URL(req.url!, base)),
      ),
    );
    const proxy = await startProxy();
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      const pool = await startPool([httpSpec("tls", `https://127.0.0.1:${tlsPort}/mcp`)], { env: { ...process.env, HTTPS_PROXY: proxy.url } });
      expect(textOf(await pool.callTool("tls", "echo", { text: "tunnelled" }))).toBe("tunnelled");
      expect(proxy.seen).toContain(`CONNECT 127.0.0.1:${tlsPort}`);
      // Tunnels are kept alive: more calls open no new ones.
      const tunnels = proxy.seen.length;
      for (const text of ["a", "b", "c"]) expect(textOf(await pool.callTool("tls", "echo", { text }))).toBe(text);
      expect(proxy.seen.length).toBe(tunnels);
      const own = await startProxy();
      const pool2 = await startPool(
        [
          {
            ...httpSpec("own", `https://127.0.0.1:${tlsPort}/mcp`),
            transport: { type: "http", url: `https://127.0.0.1:${tlsPort}/mcp`, headers: {}, proxy: own.url },
          },
        ],
        { env: { ...process.env, HTTPS_PROXY: "http://127.0.0.1:1" } },
      );
      expect(textOf(await pool2.callTool("own", "echo", { text: "mine" }))).toBe("mine");
      expect(own.seen).toContain(`CONNECT 127.0.0.1:${tlsPort}`);
    } finally {
      if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    }
  });

  it("says so when the proxy refuses the tunnel", async () => {
    const refusing = createHttpServer();
    refusing.on("connect", (_req: IncomingMessage, socket: Socket) => socket.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"));
    const port = await listen(refusing);
    const pool = await startPool([httpSpec("blocked", "https://mcp.example.invalid/mcp")], { env: { HTTPS_PROXY: `http://user:SECRETPW@127.0.0.1:${port}` } });
    const error = pool.status()[0]!.error!;
    expect(error).toBe(
      `cannot reach https://mcp.example.invalid/mcp: proxy refused (the proxy 127.0.0.1:${port} refused the tunnel to mcp.example.invalid:443: HTTP 407 Proxy Authentication Required (PROXY_CONNECT_FAILED))`,
    );
  });
});

/** A self-signed certificate for 127.0.0.1 (IP in subjectAltName, as Node checks it) and its key, written to a fresh folder. */
function selfSigned(name: string): { dir: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), `codemux-${name}-`));
  dirs.push(dir);
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}-key.pem`);
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", `/CN=${name}`].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { stdio: "ignore" },
  );
  return { dir, cert, key };
}

function tlsSpec(name: string, url: string, tls?: TlsSettings): ServerSpec {
  return { name, transport: { type: "http", url, headers: {}, ...(tls ? { tls } : {}) }, callTimeoutMs: 5000, connectTimeoutMs: 5000, tools: {} };
}

describe("downstream HTTPS with the entry's own certificates (tls)", () => {
  it("trusts the CA that tls.ca names, and refuses a self-signed server without it", async () => {
    const server = selfSigned("server");
    const base = new URL(await startHttpServer(children));
    const port = await listen(
      createHttpsServer({ key: readFileSync(server.key), cert: readFileSync(server.cert) }, (req, res) => forward(req, res, new URL(req.url!, base))),
    );
    const url = `https://127.0.0.1:${port}/mcp`;
    const trusted = await startPool([tlsSpec("trusted", url, { ca: server.cert })]);
    expect(textOf(await trusted.callTool("trusted", "echo", { text: "over tls" }))).toBe("over tls");
    const untrusted = await startPool([tlsSpec("untrusted", url)], { retryDelaysMs: [] });
    expect(untrusted.status()[0]).toMatchObject({ state: "failed", error: expect.stringMatching(/self.signed certificate/i) });
  });

  it("sends the client certificate of tls.cert and tls.key to a server that requires one (mutual TLS)", async () => {
    const server = selfSigned("server");
    const client = selfSigned("client");
    const base = new URL(await startHttpServer(children));
    const port = await listen(
      createHttpsServer(
        { key: readFileSync(server.key), cert: readFileSync(server.cert), ca: readFileSync(client.cert), requestCert: true, rejectUnauthorized: true },
        (req, res) => forward(req, res, new URL(req.url!, base)),
      ),
    );
    const url = `https://127.0.0.1:${port}/mcp`;
    const withCert = await startPool([tlsSpec("mtls", url, { ca: server.cert, cert: client.cert, key: client.key })]);
    expect(textOf(await withCert.callTool("mtls", "echo", { text: "both ends known" }))).toBe("both ends known");
    const without = await startPool([tlsSpec("anonymous", url, { ca: server.cert })], { retryDelaysMs: [] });
    expect(without.status()[0]).toMatchObject({ state: "failed" });
  });

  it("names a certificate file it cannot read", async () => {
    const pool = await startPool([tlsSpec("missing", "https://127.0.0.1:1/mcp", { ca: "/nonexistent/ca.pem" })], { retryDelaysMs: [] });
    expect(pool.status()[0]).toMatchObject({ state: "failed", error: expect.stringContaining("cannot read tls.ca /nonexistent/ca.pem: ENOENT") });
  });

  it("warns when a server is reached over plain http:// off this machine, and not on loopback", async () => {
    const { lines, logger } = recordingLogger();
    await startPool([tlsSpec("remote", "http://codemux-test.invalid/mcp"), tlsSpec("local", `http://127.0.0.1:${await freePort()}/mcp`)], {
      logger,
      retryDelaysMs: [],
    });
    const warnings = lines.filter((line) => line.includes("plain http://"));
    expect(warnings).toEqual([expect.stringContaining("[remote] connects over plain http:// to codemux-test.invalid")]);
  });
});

describe("safe retries", () => {
  /** Sits in front of the misbehaving server; `plan[tool]` lists what the next tools/call of that tool meets. */
  async function startFlakyFront(base: string): Promise<{ url: string; plan: Record<string, Array<"503" | "reset">>; forwarded: Record<string, number> }> {
    const plan: Record<string, Array<"503" | "reset">> = {};
    const forwarded: Record<string, number> = {};
    const front = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        let tool: string | undefined;
        try {
          const message = JSON.parse(body.toString()) as { method?: string; params?: { name?: string } };
          if (message.method === "tools/call") tool = message.params?.name;
        } catch {
          // Not JSON (a GET).
        }
        const step = tool ? plan[tool]?.shift() : undefined;
        if (step === "503") {
          res.writeHead(503, { "content-type": "text/plain" }).end("Service Unavailable");
          return;
        }
        if (tool) forwarded[tool] = (forwarded[tool] ?? 0) + 1;
        if (step === "reset") {
          // The request reached the server; the answer never comes back.
          const sink = Object.assign(new PassThrough(), { writeHead: () => undefined }) as unknown as ServerResponse;
          forward(req, sink, new URL(req.url!, base), body);
          setTimeout(() => req.socket.destroy(), 100);
          return;
        }
        forward(req, res, new URL(req.url!, base), body);
      });
    });
    return { url: `http://127.0.0.1:${await listen(front)}/mcp`, plan, forwarded };
  }

  it("retries a call that met 503 before reaching the server, whatever the tool, at most twice", async () => {
    const front = await startFlakyFront(await startHttpServer(children));
    const pool = await startPool([httpSpec("f", front.url)]);
    front.plan.echo = ["503", "503"];
    const result = await pool.callTool("f", "echo", { text: "third time" });
    expect(textOf(result)).toBe("third time");
    expect(result._meta).toMatchObject({ "codemux/retries": 2 });
    front.plan.echo = ["503", "503", "503"];
    const error = await pool.callTool("f", "echo", { text: "never" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownstreamError);
    expect((error as Error).message).toMatch(/HTTP 503 Service Unavailable from http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(front.forwarded.echo).toBe(1);
  });

  it("retries a read-only or idempotent tool after the request was sent, and never any other tool", async () => {
    const front = await startFlakyFront(await startHttpServer(children));
    const pool = await startPool([httpSpec("f", front.url)]);
    front.plan.echo = ["reset"];
    expect(textOf(await pool.callTool("f", "echo", { text: "read" }, { annotations: { readOnlyHint: true } }))).toBe("read");
    expect(front.forwarded.echo).toBe(2);
    front.plan.counter = ["reset"];
    expect(textOf(await pool.callTool("f", "counter", {}, { annotations: { idempotentHint: true } }))).toContain("calls");
    expect(front.forwarded.counter).toBe(2);
    front.plan.fail = ["reset"];
    await expect(pool.callTool("f", "fail", { message: "a write" })).rejects.toThrow();
    expect(front.forwarded.fail).toBe(1);
  });
});
