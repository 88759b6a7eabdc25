// The deployment files as shipped: the compose file and the Kubernetes manifests against their schemas, the
// flags, variables and paths they give codemux against what its --help says it accepts, the Dockerfile's
// promises, an instance started as compose starts it, and the nginx config run by a real nginx in front of two
// HTTP servers (its affinity rule, its fallback, its streaming). No Docker daemon or cluster runs here; the
// image's steps run in scripts/test/deploy.test.mjs (pnpm test:packs).
import { haveProgram, localNginxConfig, startNginx, type Nginx } from "@codemux/test-servers";
import { type ChildProcess, execFileSync } from "node:child_process";
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
import { composeFile, imageFolders, imageStage, k8sManifest, readRepoFile as read } from "../../../scripts/lib/deploy-files.mjs";
import { cli, runCli } from "./run-cli";
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
  const stage = imageStage();

  it("installs the packed CLI with the image script and starts codemux through it, as a user that is not root", () => {
    expect(read("Dockerfile")).toContain("pnpm pack");
    expect(stage.copies).toContain("deploy/image/codemux-image.sh /usr/local/bin/codemux-image");
    expect(stage.runs.some((run) => run.startsWith(`codemux-image install /tmp/pack/codemux-*.tgz ${stage.user}:${stage.user} `))).toBe(true);
    expect(stage.user).toBe("node");
    expect(stage.entrypoint).toEqual(["codemux-image", "start"]);
  });
});

describe("the deployment files give codemux only flags, variables and paths its --help names", () => {
  let help = "";
  let serveHelp = "";
  const home = mkdtempSync(join(tmpdir(), "codemux-help-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const helpOf = (args: string[]) =>
    execFileSync(process.execPath, [cli, ...args, "--help"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: home } });

  beforeAll(() => {
    help = helpOf([]);
    serveHelp = helpOf(["serve"]);
  });

  const stage = imageStage();
  const container = k8s.container;
  // Each place that starts codemux, with what it gives it: its arguments, its environment, the probes that ask it.
  const runs = () => [
    { where: "Dockerfile CMD", args: stage.cmd ?? [], env: [] as string[] },
    ...Object.entries(composeInstances).map(([name, service]) => ({
      where: `compose.yaml ${name}`,
      args: service.command ?? [],
      env: Object.keys(service.environment ?? {}),
    })),
    { where: "deploy/k8s/codemux.yaml", args: container?.args ?? [], env: (container?.env ?? []).map((e) => e.name) },
  ];
  const portOf = (args: string[]) => Number(/:(\d+)$/.exec(args[args.indexOf("--http") + 1] ?? "")?.[1]);

  it("every flag is one that --help lists for the command it is given to", () => {
    const commands = [...help.slice(help.indexOf("\nCommands:")).matchAll(/^ {2}([a-z-]+)\b/gm)].map((m) => m[1]);
    const flags = new Set([...`${help}\n${serveHelp}`.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]));
    expect(flags).toContain("--trusted-proxy");
    for (const { where, args } of runs()) {
      expect(commands, where).toContain(args[0]);
      expect(args[0], `${where}: the checks below know serve's flags`).toBe("serve");
      for (const arg of args.filter((a) => a.startsWith("--"))) expect(flags, `${where}: ${arg}`).toContain(arg.split("=")[0]);
    }
  });

  it("every variable is one that --help names, or one the same file's values refer to", () => {
    const variables = new Set([...`${help}\n${serveHelp}`.matchAll(/\b(CODEMUX_[A-Z_]+)\b/g)].map((m) => m[1]));
    expect(variables).toContain("CODEMUX_INSTANCE_URL");
    const referred = new Set((container?.env ?? []).flatMap((e) => [...(e.value ?? "").matchAll(/\$\((\w+)\)/g)].map((m) => m[1])));
    const script = read("deploy/image/codemux-image.sh");
    const exported = [...script.matchAll(/^\s*export (\w+)$/gm)].map((m) => m[1] as string);
    expect(exported).toEqual(["CODEMUX_HOME"]);
    for (const { where, env } of [...runs(), { where: "deploy/image/codemux-image.sh", env: exported }])
      for (const name of env) expect(variables.has(name) || referred.has(name), `${where}: ${name}`).toBe(true);
  });

  it("the image's folders are the ones the Kubernetes pod mounts, and CODEMUX_HOME is its home folder", () => {
    const folders = imageFolders();
    expect(folders).toEqual({ data: "/data", home: "/home/node/.codemux" });
    expect((container?.volumeMounts ?? []).map((m) => m.mountPath).sort()).toEqual([folders.data, folders.home].sort());
    expect(help).toContain("CODEMUX_HOME");
    expect(read("deploy/image/codemux-image.sh")).toMatch(/^\s*CODEMUX_HOME="\$\{CODEMUX_HOME:-\$home\}"$/m);
  });

  it("every probe asks a route --help names, on the port codemux listens on", () => {
    const routes = new Set([...serveHelp.matchAll(/(\/[a-z]+)\b/g)].map((m) => m[1]));
    const url = (command: string[] | undefined) => new URL(/fetch\('([^']+)'\)/.exec(command?.join(" ") ?? "")?.[1] ?? "");
    const containerPort = (port: string | number | undefined) => container?.ports?.find((p) => p.name === port || p.containerPort === port)?.containerPort;
    const probes = [
      { where: "Dockerfile HEALTHCHECK", path: url(stage.healthcheck).pathname, port: Number(url(stage.healthcheck).port), listens: portOf(stage.cmd ?? []) },
      ...Object.entries(composeInstances).map(([name, service]) => ({
        where: `compose.yaml ${name} healthcheck`,
        path: url(service.healthcheck?.test).pathname,
        port: Number(url(service.healthcheck?.test).port),
        listens: portOf(service.command ?? []),
      })),
      ...(["readinessProbe", "livenessProbe"] as const).map((probe) => ({
        where: `deploy/k8s/codemux.yaml ${probe}`,
        path: container?.[probe]?.httpGet?.path,
        port: containerPort(container?.[probe]?.httpGet?.port),
        listens: portOf(container?.args ?? []),
      })),
    ];
    expect(probes.map((p) => p.path)).toEqual(["/healthz", "/readyz", "/readyz", "/readyz", "/healthz"]);
    for (const { where, path, port, listens } of probes) {
      expect(routes, where).toContain(path);
      expect(port, where).toBe(listens);
    }
  });

  it("leaves a drain its time: the grace period before SIGKILL is longer than --drain-ms's default", () => {
    const drainMs = Number(/--drain-ms <ms>[\s\S]*?\(default (\d+)/.exec(serveHelp)?.[1]);
    expect(drainMs).toBeGreaterThan(0);
    expect((k8s.pod?.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(drainMs);
    for (const service of Object.values(composeInstances)) expect(Number.parseInt(service.stop_grace_period ?? "10s", 10) * 1000).toBeGreaterThan(drainMs);
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
