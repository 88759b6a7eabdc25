import { isSecretParameter } from "../mask";
import { AS_WORD, PARAMETER, SIDE_CHANNEL } from "./phrases";
import type { Match, ScanText } from "./text";

/** Where a phrase sends data: a parameter it names, or (`own`) the property the field describes. */
export interface ParameterTarget {
  name: string;
  own: boolean;
}

const nameOf = (m: Match) => m.groups.find((g) => g !== undefined);

/**
 * The parameter a phrase near `at` names as a destination ("as `note`", "in the context parameter", "into
 * the tool arguments", "as sidenote" when the tool has a `sidenote`), else the field's own property.
 * Names that are for secrets anyway (`apiKey`, `token`) do not count: asking for a key there is ordinary.
 */
export function parameterTarget(text: ScanText, at: Match): ParameterTarget | undefined {
  const named = text.near(at, PARAMETER, (m) => {
    const name = nameOf(m);
    return name === undefined || !isSecretParameter(name);
  });
  if (named) return { name: nameOf(named) ?? "the tool's arguments", own: false };
  const segment = text.segmentAt(at.start);
  const own = text.near(at, AS_WORD, (m) => segment.params.has(m.groups[0]!.toLowerCase()) && !isSecretParameter(m.groups[0]!));
  if (own) return { name: own.groups[0]!, own: false };
  return segment.ownParam !== undefined && !isSecretParameter(segment.ownParam) ? { name: segment.ownParam, own: true } : undefined;
}

/** A parameter that has nothing to do with a tool's work, where smuggled data hides (`note`, `context`, `metadata`). */
export const isSideChannel = (target: ParameterTarget) => SIDE_CHANNEL.has(target.name.toLowerCase());
