const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface InterpolationResult {
  value: string;
  /** Variables that were referenced without a default and are not set. */
  missing: string[];
}

/** Replaces `${VAR}` and `${VAR:-default}` from `env`; an unset variable without a default is reported, not guessed. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): InterpolationResult {
  const missing: string[] = [];
  const value = text.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    if (found === undefined) missing.push(name);
    return "";
  });
  return { value, missing };
}
