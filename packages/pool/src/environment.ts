/** What a stdio server inherits from codemux's environment; everything else must be configured in `env`. */
const INHERITED_POSIX = ["HOME", "LOGNAME", "USER", "PATH", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];
// Without PATHEXT and COMSPEC, `npx` (npx.cmd) and other shims cannot start on Windows.
const INHERITED_WINDOWS = [
  "APPDATA",
  "COMSPEC",
  "HOMEDRIVE",
  "HOMEPATH",
  "LOCALAPPDATA",
  "PATH",
  "PATHEXT",
  "PROCESSOR_ARCHITECTURE",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "SYSTEMDRIVE",
  "SYSTEMROOT",
  "TEMP",
  "TMP",
  "USERNAME",
  "USERPROFILE",
  "WINDIR",
];

export function inheritedVariableNames(platform: NodeJS.Platform = process.platform): string[] {
  return platform === "win32" ? INHERITED_WINDOWS : INHERITED_POSIX;
}

/** The environment of a stdio server: the inherited allow-list, then the server's own `env`. */
export function childEnvironment(
  configured: Record<string, string>,
  parent: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  const wanted = new Set(inheritedVariableNames(platform).map((n) => n.toUpperCase()));
  for (const [key, value] of Object.entries(parent)) {
    // Windows variable names are case-insensitive ("Path"), so compare upper-cased there.
    const match = platform === "win32" ? wanted.has(key.toUpperCase()) : wanted.has(key);
    if (match && value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return { ...env, ...configured };
}
