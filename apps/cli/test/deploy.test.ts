import { findProgram, haveProgram } from "@codemux/test-servers";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { runCli } from "./run-cli";

const root = resolve(import.meta.dirname, "../../..");
const run = promisify(execFile);

/** The long flags `codemux --help` and `codemux serve --help` list: every flag a deployment file passes must be one. */
async function serveFlags(): Promise<Set<string>> {
  const helps = await Promise.all([["--help"], ["serve", "--help"]].map((args) => runCli(args, { cwd: root, env: process.env })));
  return new Set(helps.flatMap((help) => help.stdout.match(/--[a-z][a-z-]+/g) ?? []));
}

const flagsOf = (args: string[]) => args.filter((arg) => arg.startsWith("--"));

describe("the deployment files (checked statically: no Docker daemon or cluster here)", () => {
  it.skipIf(!haveProgram("nginx", "nginx-light"))("deploy/nginx.conf passes nginx -t", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-nginx-t-"));
    try {
      const nginx = findProgram("nginx") as string;
      const { stderr } = await run(nginx, [
        "-t",
        "-q",
        "-p",
        dir,
        "-e",
        join(dir, "error.log"),
        "-c",
        join(root, "deploy/nginx.conf"),
        "-g",
        `pid ${join(dir, "nginx.pid")};`,
      ]);
      expect(stderr).not.toMatch(/emerg|error/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("compose.yaml runs Redis persisting every write, two instances with distinct ids on it, and nginx with deploy/nginx.conf", async () => {
    const [doc] = parseAllDocuments(await readFile(join(root, "compose.yaml"), "utf8"), { merge: true });
    const compose = doc?.toJS() as { services: Record<string, { command?: string[]; environment?: Record<string, string>; volumes?: string[] }> };
    expect(compose.services.redis?.command).toEqual(expect.arrayContaining(["--appendonly", "yes", "--appendfsync", "always"]));
    const known = await serveFlags();
    const ids = ["codemux-a", "codemux-b"].map((name) => {
      const service = compose.services[name];
      expect(service?.environment?.CODEMUX_STORE).toBe("redis://redis:6379");
      for (const flag of flagsOf(service?.command ?? [])) expect(known, `${name} passes ${flag}`).toContain(flag);
      const command = service?.command ?? [];
      return command[command.indexOf("--instance-id") + 1];
    });
    expect(new Set(ids).size).toBe(2);
    expect(compose.services.nginx?.volumes).toContain("./deploy/nginx.conf:/etc/nginx/nginx.conf:ro");
    const nginxConf = await readFile(join(root, "deploy/nginx.conf"), "utf8");
    for (const id of ids) expect(nginxConf).toContain(`"~^${id}\\." ${id}:3920;`);
  });

  it("the Kubernetes example has replicas, probes on /readyz and /healthz, a per-pod instance id and address, and Redis persisting every write", async () => {
    const docs = (await Promise.all(["codemux.yaml", "redis.yaml"].map((f) => readFile(join(root, "deploy/k8s", f), "utf8")))).flatMap((text) =>
      parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: Record<string, unknown> }),
    );
    const deployment = docs.find((d) => d.kind === "Deployment" && d.metadata.name === "codemux") as unknown as {
      spec: {
        replicas: number;
        template: {
          spec: {
            containers: Array<{
              args: string[];
              env: Array<{ name: string }>;
              readinessProbe: { httpGet: { path: string } };
              livenessProbe: { httpGet: { path: string } };
            }>;
          };
        };
      };
    };
    expect(deployment.spec.replicas).toBeGreaterThan(1);
    const [container] = deployment.spec.template.spec.containers;
    expect(container?.readinessProbe.httpGet.path).toBe("/readyz");
    expect(container?.livenessProbe.httpGet.path).toBe("/healthz");
    expect(container?.env.map((e) => e.name)).toEqual(expect.arrayContaining(["CODEMUX_STORE", "CODEMUX_INSTANCE_ID", "CODEMUX_ADVERTISE_URL"]));
    const known = await serveFlags();
    for (const flag of flagsOf(container?.args ?? [])) expect(known).toContain(flag);
    expect(docs.map((d) => d.kind)).toEqual(expect.arrayContaining(["Service", "StatefulSet"]));
    expect(JSON.stringify(docs)).toContain('"--appendfsync","always"');
  });
});
