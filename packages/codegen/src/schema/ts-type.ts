/** A TypeScript type expression and how tightly it binds, so composition adds parentheses only where needed. */
export interface TsType {
  text: string;
  /** 0: a union, 1: an intersection, 2: binds like a name (may take `[]`). */
  precedence: 0 | 1 | 2;
  /** The members of a union, kept so that nested unions flatten and deduplicate. */
  members?: readonly TsType[];
}

export const UNKNOWN: TsType = { text: "unknown", precedence: 2 };
export const NEVER: TsType = { text: "never", precedence: 2 };
export const NULL: TsType = { text: "null", precedence: 2 };

export function atom(text: string): TsType {
  return { text, precedence: 2 };
}

export function union(types: readonly TsType[]): TsType {
  const members: TsType[] = [];
  for (const type of types.flatMap((t) => t.members ?? [t])) {
    if (type.text === UNKNOWN.text) return UNKNOWN;
    if (type.text === NEVER.text || members.some((m) => m.text === type.text)) continue;
    members.push(type);
  }
  if (members.length === 0) return NEVER;
  if (members.length === 1) return members[0] as TsType;
  return { text: members.map((m) => m.text).join(" | "), precedence: 0, members };
}

export function intersection(types: readonly TsType[]): TsType {
  const members: TsType[] = [];
  for (const type of types) {
    if (type.text === NEVER.text) return NEVER;
    if (type.text === UNKNOWN.text || members.some((m) => m.text === type.text)) continue;
    members.push(type);
  }
  if (members.length === 0) return UNKNOWN;
  if (members.length === 1) return members[0] as TsType;
  return { text: members.map((m) => wrap(m, 1)).join(" & "), precedence: 1 };
}

/** `type` in parentheses when it binds more loosely than `precedence` requires. */
export function wrap(type: TsType, precedence: 1 | 2): string {
  return type.precedence < precedence ? `(${type.text})` : type.text;
}
