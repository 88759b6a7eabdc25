// The deployment files as shipped: the compose file and the Kubernetes manifests against their schemas, the
// Dockerfile's promises, an instance started as compose starts it, and the nginx config run by a real nginx in
// front of two HTTP servers (its affinity rule, its fallback, its streaming). No Docker daemon or cluster runs here.
import { haveProgram, localNginxConfig, startNginx, type Nginx } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type Server, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeFile, k8sManifest, readRepoFile as read } from "../../../scripts/lib/deploy-files.mjs";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const haveNginx = haveProgram("nginx", "nginx");
const { compose, instances: composeInstances } = composeFile();
const k8s = k8sManifest();

describe("compose.yaml", () => {
  it("is a valid Compose file (the compose-spec schema)", async () => {
    // It names draft 7 by its https address, which Ajv (draft 7 by default) knows by the http one.
    const { $schema: _, ...schema } = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/compose-spec/compose-spec.json"), "utf8"));
    // Strict mode would refuse the spec's own "deprecated" annotations as unknown keywords.
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    // The schema does catch a mistake: a misspelt service key.
    const broken = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
    (broken.services.redis as Record<string, unknown>).comand = ["redis-server"];
    expect(validate(broken)).toBe(false);
  });

  it("runs two instances with distinct ids on one Redis that persists every write, behind nginx", () => {
    const { redis, nginx } = compose.services;
    expect(redis?.command).toEqual(expect.arrayContaining(["--appendonly", "yes", "--appendfsync", "always"]));
    const instances = Object.values(composeInstances);
    expect(instances).toHaveLength(2);
    const ids = instances.map((s) => s.environment?.CODEMUX_INSTANCE_ID);
    expect(new Set(ids).size).toBe(2);
    for (const s of instances) expect(s.environment?.CODEMUX_STORE).toMatch(/^redis:\/\/redis:6379/);
    expect(nginx?.volumes?.[0]).toMatch(/^\.\/deploy\/nginx\/codemux\.conf:/);
  });
});

describe("deploy/k8s/codemux.yaml", () => {
  const docs = k8s.documents;
  const models = { Deployment, Service, Ingress } as const;

  it("holds a Deployment, a Service and an Ingress, each valid against the Kubernetes schema", () => {
    expect(docs.map((d) => d.kind)).toEqual(["Deployment", "Service", "Ingress"]);
    for (const doc of docs) {
      const Model = models[doc.kind as keyof typeof models];
      expect(() => new Model(doc as never).validate(), doc.kind).not.toThrow();
    }
    // The schema does catch a mistake: replicas as a word.
    const broken = structuredClone(docs[0]) as unknown as { spec: { replicas: unknown } };
    broken.spec.replicas = "two";
    expect(() => new Deployment(broken as never).validate()).toThrow(/replicas/);
  });

  it("probes readiness on /readyz and liveness on /healthz, runs as non-root, with replicas", () => {
    const deployment = new Deployment(docs[0] as never);
    const container = deployment.spec?.template.spec?.containers[0];
    expect(deployment.spec?.replicas).toBeGreaterThan(1);
    expect(container?.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container?.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(deployment.spec?.template.spec?.securityContext?.runAsNonRoot).toBe(true);
  });
});

describe("Dockerfile", () => {
  const lines = read("Dockerfile").split("\n");
  const lastStage = lines.slice(lines.findLastIndex((l) => l.startsWith("FROM ")));

  it("installs the packed CLI and runs it as a non-root user", () => {
    expect(lines.some((l) => l.includes("pnpm pack"))).toBe(true);
    expect(lastStage.some((l) => /npm install --global .*codemux-\*\.tgz/.test(l))).toBe(true);
    const user = lastStage.find((l) => l.startsWith("USER "));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/USER (root|0)\b/);
    expect(lastStage).toContain('ENTRYPOINT ["codemux"]');
  });
});

describe("an instance started as compose starts it", () => {
  const dir = mkdtempSync(join(tmpdir(), "codemux-compose-instance-"));
  // Where it runs: the built-in filesystem server's root, not the home folder (which it refuses to serve).
  const data = join(dir, "data");
  mkdirSync(data);
  const started: ChildProcess[] = [];
  const secret = "compose-instance-token-0123456789";
  afterAll(() => {
    for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  const instance = composeInstances["codemux-a"];
  // Its environment as written, but no Redis: the Host check does not need one.
  const env = () => {
    const { CODEMUX_STORE: _store, ...written } = instance?.environment ?? {};
    return { ...written, PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, "home"), CODEMUX_TOKEN: `me:${secret}` };
  };
  const status = (url: string, host: string) =>
    new Promise<number>((done, fail) => {
      const req = request(`${url}/v1/tools`, { headers: { host, authorization: `Bearer ${secret}` } }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      req.on("error", fail).end();
    });

  it("answers a request its peer forwards to its CODEMUX_INSTANCE_URL's host, with no --allowed-host, and still refuses another host", async () => {
    const own = new URL(instance?.environment?.CODEMUX_INSTANCE_URL ?? "").host;
    expect(own).toBe("codemux-a:3920");
    const { url } = await serveCli(["serve", "--http", "127.0.0.1:0"], { cwd: data, env: env(), started });
    expect(await status(url, own)).toBe(200);
    expect(await status(url, "codemux-b:3920")).toBe(403);
  });

  it("refuses an instance URL that is not an http(s) URL, with a sentence", async () => {
    const run = await runCli(["serve", "--http", "127.0.0.1:0", "--instance-url", "codemux-a:3920"], { cwd: data, env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('instanceUrl "codemux-a:3920" is not an http(s) URL; give the address the other instances reach this one at');
  });
});

describe.skipIf(!haveNginx)("deploy/nginx/codemux.conf with a real nginx", () => {
  const backends = new Map<string, Server>();
  let nginx: Nginx | undefined;

  /** An HTTP server answering with its name; /stream writes one line, then waits for /release before ending. */
  async function backend(name: string): Promise<number> {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    const server = createServer((req, res) => {
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${name}\n\n`);
        void released.then(() => res.end());
        return;
      }
      if (req.url === "/release") release();
      res.end(name);
    });
    backends.set(name, server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  }

  async function stop(server: Server | undefined): Promise<void> {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  }

  beforeAll(async () => {
    const [a, b] = [await backend("a"), await backend("b")];
    // The compose service names pointed at this machine's ports: nothing else in the file changes.
    const addresses = { "codemux-a:3920": `127.0.0.1:${a}`, "codemux-b:3920": `127.0.0.1:${b}` };
    nginx = await startNginx((port) => localNginxConfig(read("deploy/nginx/codemux.conf"), { addresses, port }));
  });

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([...backends.values()].map(stop));
  });

  const name = async (init?: RequestInit, path = "/mcp") => {
    const response = await fetch(`${nginx?.url}${path}`, init);
    return `${response.status === 200 ? "" : `${response.status} `}${await response.text()}`;
  };

  it("sends a request back to the instance its Mcp-Session-Id names", async () => {
    for (let i = 0; i < 4; i++) {
      expect(await name({ headers: { "mcp-session-id": "b.0f3c9a" } })).toBe("b");
      expect(await name({ headers: { "mcp-session-id": "a.77e1d2" } })).toBe("a");
    }
  });

  it("sends a legacy SSE post back to the instance its ?sessionId= names", async () => {
    for (let i = 0; i < 4; i++) {
      expect(await name(undefined, "/messages?sessionId=b.0f3c9a")).toBe("b");
      expect(await name(undefined, "/messages?sessionId=a.77e1d2")).toBe("a");
    }
  });

  it("spreads requests with no session (or an unknown instance) over every instance", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++) seen.add(await name(i % 2 ? { headers: { "mcp-session-id": "zz.1" } } : undefined));
    expect([...seen].sort()).toEqual(["a", "b"]);
  });

  it("passes a stream's first event through before the stream ends (no buffering)", async () => {
    const response = await fetch(`${nginx?.url}/stream`, { headers: { "mcp-session-id": "a.1" } });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: a\n\n");
    await name({ headers: { "mcp-session-id": "a.1" } }, "/release");
    await reader.cancel();
  });

  // Last: it stops instance a. A live instance answers for the dead one's sessions (codemux says they are gone: scripts/test/deploy.test.mjs).
  it("sends the requests of a dead instance's sessions, posts included, to a live one instead of answering 502", async () => {
    await stop(backends.get("a"));
    for (let i = 0; i < 4; i++) {
      expect(await name({ method: "POST", headers: { "mcp-session-id": "a.77e1d2" }, body: "{}" })).toBe("b");
      expect(await name({ method: "POST", body: "{}" }, "/messages?sessionId=a.77e1d2")).toBe("b");
      expect(await name({ headers: { "mcp-session-id": "b.0f3c9a" } })).toBe("b");
    }
  });
});
