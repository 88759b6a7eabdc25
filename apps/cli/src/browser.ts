import { spawn } from "node:child_process";

/**
 * The program and arguments that open a web page in the browser on `platform`, run without a shell:
 * an authorization URL comes from a server's OAuth metadata and may hold `&`, `|`, `^`, `"` or `%`,
 * which cmd.exe would interpret. Undefined for anything but an http(s) URL, which is never opened.
 */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform): { command: string; args: string[] } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  if (platform === "darwin") return { command: "open", args: [parsed.href] };
  // url.dll hands the URL to the default browser itself: no cmd /c start.
  if (platform === "win32") return { command: "rundll32.exe", args: ["url.dll,FileProtocolHandler", parsed.href] };
  return { command: "xdg-open", args: [parsed.href] };
}

/** Opens the URL when a desktop is there; never fails (the URL is printed anyway). */
export function openInBrowser(url: string, platform: NodeJS.Platform = process.platform): void {
  const desktop = platform === "darwin" || platform === "win32" || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
  const opener = desktop ? browserCommand(url, platform) : undefined;
  if (!opener) return;
  try {
    const child = spawn(opener.command, opener.args, { stdio: "ignore", detached: true, shell: false, windowsHide: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the printed URL is enough.
  }
}
