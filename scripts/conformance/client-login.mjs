// `codemux auth login` run as a user would, with this script as the user's browser: it opens the authorization URL
// codemux prints and follows the authorization server's redirect back to codemux's loopback callback (the referee's
// authorization servers approve at once, with no page to fill in).
import { spawn } from "node:child_process";
import { CLI_PATH } from "./processes.mjs";

const LOGIN_TIMEOUT_MS = 20_000;

/** Resolves once `codemux auth login <server>` has finished; rejects with its output when it failed. */
export function login({ config, env, server, log }) {
  const child = spawn(process.execPath, [CLI_PATH, "auth", "login", server, "--no-open", "--config", config, "--timeout", "15"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let opened = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill(), LOGIN_TIMEOUT_MS);
    const onData = (chunk) => {
      output = (output + chunk).slice(-64 * 1024);
      const url = output.match(/^\s+(https?:\/\/\S+)$/m)?.[1];
      if (!url || opened) return;
      opened = true;
      browse(url).catch((error) => log(`the browser failed: ${error.message}`));
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", onData);
    child.on("close", (code) => {
      clearTimeout(timer);
      log(`codemux auth login: ${output.trim()}`);
      if (code === 0) resolve();
      else reject(new Error(`codemux auth login ${server} exited with code ${code}: ${output.trim()}`));
    });
  });
}

/** Follows redirects by hand (at most 5) to the loopback callback, as a browser would. */
async function browse(start) {
  let url = start;
  for (let hops = 0; hops < 5; hops++) {
    const response = await fetch(url, { redirect: "manual" });
    const next = response.headers.get("location");
    await response.arrayBuffer();
    if (response.status < 300 || response.status >= 400 || !next) return;
    url = new URL(next, url).href;
  }
}
