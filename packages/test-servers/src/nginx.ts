import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findProgram, freePort } from "./redis-server";

/** One codemux instance behind the load balancer: its id (the start of its session ids) and its `host:port`. */
export interface Backend {
  id: string;
  address: string;
}

/**
 * The load balancer codemux's docs describe: requests carrying a 2025-era session id (the `Mcp-Session-Id`
 * header, or a legacy SSE post's `/messages?sessionId=`) go to the instance whose id starts it (nginx
 * `map`s on the id's prefix); everything else is spread over all instances. Streams pass unbuffered.
 */
export function affinityConfig(backends: Backend[], listen: number): string {
  const routes = backends.map((b) => `    "~^${b.id}\\\\." ${b.address};`).join("\n");
  const servers = backends.map((b) => `    server ${b.address} max_fails=0;`).join("\n");
  return `map $arg_sessionId $codemux_legacy_backend {
${routes}
    default codemux_all;
}
map $http_mcp_session_id $codemux_backend {
${routes}
    default $codemux_legacy_backend;
}
upstream codemux_all {
${servers}
}
server {
    listen 127.0.0.1:${listen};
    location / {
        proxy_pass http://$codemux_backend;
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header Connection "";
        proxy_buffering off;
        proxy_read_timeout 1h;
        proxy_next_upstream off;
    }
}
`;
}

/**
 * A shipped nginx file (an http-context file, as deploy/nginx/codemux.conf) as it runs here: each `host:port`
 * it names pointed at a local address, its `listen` at `port` on loopback; nothing else changes.
 */
export function localNginxConfig(text: string, { addresses, port }: { addresses: Record<string, string>; port: number }): string {
  let local = text;
  for (const [from, to] of Object.entries(addresses)) {
    if (!local.includes(from)) throw new Error(`The nginx file names no ${from}.`);
    local = local.replaceAll(from, to);
  }
  const listen = /^(\s*)listen\s+\d+;/m;
  if (!listen.test(local)) throw new Error("The nginx file has no `listen PORT;` line to point at a local port.");
  return local.replace(listen, `$1listen 127.0.0.1:${port};`);
}

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

/** Starts a real nginx (as this user, its files in a temporary folder) with `server` as its http block's content. */
export async function startNginx(httpBlock: (port: number) => string): Promise<Nginx> {
  const program = findProgram("nginx");
  if (!program) throw new Error("nginx is not installed (apt-get install nginx-light).");
  const dir = await mkdtemp(join(tmpdir(), "codemux-nginx-"));
  await mkdir(join(dir, "logs"));
  const port = await freePort();
  const conf = `worker_processes 1;
error_log ${join(dir, "logs", "error.log")} warn;
pid ${join(dir, "nginx.pid")};
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${join(dir, "body")};
    proxy_temp_path ${join(dir, "proxy")};
    fastcgi_temp_path ${join(dir, "fastcgi")};
    uwsgi_temp_path ${join(dir, "uwsgi")};
    scgi_temp_path ${join(dir, "scgi")};
${httpBlock(port)}
}
`;
  await writeFile(join(dir, "nginx.conf"), conf);
  const child: ChildProcess = spawn(program, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d));
  for (let i = 0; i < 200 && !(await listening(port)); i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr.slice(-500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
