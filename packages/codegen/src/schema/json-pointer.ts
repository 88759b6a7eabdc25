/** The segments of a local reference such as `#/$defs/a~1b`, or undefined when it is not local. */
export function parseLocalRef(ref: string): string[] | undefined {
  if (!ref.startsWith("#")) return undefined;
  const fragment = ref.slice(1);
  if (fragment === "") return [];
  if (!fragment.startsWith("/")) return undefined;
  try {
    return fragment
      .slice(1)
      .split("/")
      .map((segment) => decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~"));
  } catch {
    return undefined;
  }
}

/** The value at `segments` inside `root`, reading own properties only so `__proto__` is just a key. */
export function resolvePointer(root: unknown, segments: readonly string[]): unknown {
  let node = root;
  for (const segment of segments) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      node = node[Number(segment)];
    } else if (typeof node === "object" && node !== null && Object.prototype.hasOwnProperty.call(node, segment)) {
      node = (node as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return node;
}
