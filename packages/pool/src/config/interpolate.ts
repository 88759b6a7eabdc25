const VARIABLE = /\$\{([^{}]*)\}/g;
const ENV_NAME = /^(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** What `${userHome}`, `${workspaceFolder}` and `${pathSeparator}` (VS Code's and Cursor's forms) mean here. */
export interface InterpolationContext {
  home?: string;
  /** The config file's folder. */
  workspaceFolder?: string;
  pathSeparator?: string;
}

export interface InterpolationResult {
  value: string;
  /** Variables that were referenced without a default and are not set. */
  missing: string[];
  /** References codemux cannot expand (`${input:token}`, `${command:x}`...), as written; the caller refuses them. */
  unsupported: string[];
}

/**
 * Replaces `${VAR}`, `${VAR:-default}` and `${env:VAR}` from `env`, and `${userHome}`, `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${pathSeparator}` from `context`. An unset variable without a default is
 * reported in `missing`, any other `${...}` in `unsupported`: neither is guessed nor passed on literally.
 */
export function interpolate(text: string, env: NodeJS.ProcessEnv, context: InterpolationContext = {}): InterpolationResult {
  const missing: string[] = [];
  const unsupported: string[] = [];
  const value = text.replace(VARIABLE, (match, inner: string) => {
    const special = specialVariable(inner, context);
    if (special !== undefined) return special;
    const named = ENV_NAME.exec(inner);
    if (!named) {
      unsupported.push(match);
      return "";
    }
    const [, name, fallback] = named as unknown as [string, string, string | undefined];
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    if (found === undefined) missing.push(name);
    return "";
  });
  return { value, missing, unsupported };
}

function specialVariable(name: string, context: InterpolationContext): string | undefined {
  switch (name) {
    case "userHome":
      return context.home;
    case "workspaceFolder":
    case "workspaceRoot":
      return context.workspaceFolder;
    case "workspaceFolderBasename":
      return context.workspaceFolder?.split(/[\\/]/).filter(Boolean).pop();
    case "pathSeparator":
    case "/":
      return context.pathSeparator ?? "/";
    default:
      return undefined;
  }
}

/** Why `${...}` cannot be expanded, in words a user can act on. */
export function unsupportedReason(reference: string): string {
  const inner = reference.slice(2, -1);
  const kind = inner.includes(":") ? inner.slice(0, inner.indexOf(":")) : inner;
  if (kind === "input")
    return `${reference} is an input prompt of VS Code, which codemux cannot show: put the value in an environment variable and write \${NAME} (or \${env:NAME})`;
  if (kind === "command" || kind === "config")
    return `${reference} asks the editor (${kind}), which codemux is not: write the value, or \${NAME} for an environment variable`;
  return `${reference} is not a variable codemux knows: it expands \${NAME}, \${NAME:-default}, \${env:NAME}, \${userHome}, \${workspaceFolder} and \${pathSeparator}`;
}
