import { SCAN_LIMITS, scanDefinitions } from "./scan";
import type { ScanFinding, ScanOptions, ScanRule, ScanVerdict } from "./types";

/** Characters of a skill's text read: a downstream SKILL.md is at most 256 KiB (past this, an `oversize` finding). */
export const SKILL_SCAN_CHARS = 512 * 1024;

/** Characters each window shares with the next, so that a match across a window's edge is still seen. */
const OVERLAP = 1024;

/**
 * The rules that judge a skill's text. A skill's body is instructions to the model by design ("always run the
 * linter first"), so `model-instructions` does not apply; hidden characters, secrets, exfiltration and another
 * server's tools (shadowing) do, as in any definition.
 */
export const SKILL_RULES: readonly ScanRule[] = ["hidden-characters", "secret-reference", "exfiltration", "shadowing", "oversize"];

export interface SkillScan {
  verdict: ScanVerdict;
  findings: ScanFinding[];
}

const SEVERITIES: readonly ScanVerdict[] = ["clean", "info", "warn", "high", "critical"];

/**
 * Scans a skill's text (a downstream server's `SKILL.md`, or the code and description of a saved skill) by
 * `SKILL_RULES`, in windows of `SCAN_LIMITS.fieldChars` that overlap; findings' paths are `skills[<name>]`, their
 * offsets into `text`. Bounded: at most `SKILL_SCAN_CHARS` characters are read.
 */
export function scanSkillText(input: { server: string; name: string; text: string }, options: ScanOptions = {}): SkillScan {
  const path = `skills[${input.name.slice(0, 200)}]`;
  const read = Math.min(input.text.length, SKILL_SCAN_CHARS);
  const step = SCAN_LIMITS.fieldChars - OVERLAP;
  const seen = new Set<string>();
  const findings: ScanFinding[] = [];
  let verdict: ScanVerdict = "clean";
  const add = (finding: ScanFinding) => {
    const key = `${finding.rule} ${finding.start} ${finding.end}`;
    if (seen.has(key) || findings.length >= SCAN_LIMITS.findings) return;
    seen.add(key);
    findings.push(finding);
    if (SEVERITIES.indexOf(finding.severity) > SEVERITIES.indexOf(verdict)) verdict = finding.severity;
  };
  for (let offset = 0; offset < read; offset += step) {
    const window = input.text.slice(offset, Math.min(offset + SCAN_LIMITS.fieldChars, read));
    const report = scanDefinitions({ server: input.server, instructions: window }, options);
    for (const finding of report.findings) {
      if (!SKILL_RULES.includes(finding.rule)) continue;
      add({ ...finding, path, start: finding.start + offset, end: finding.end + offset });
    }
    if (offset + SCAN_LIMITS.fieldChars >= read) break;
  }
  if (read < input.text.length)
    add({
      rule: "oversize",
      severity: "high",
      path,
      start: read,
      end: input.text.length,
      message: `Is ${input.text.length.toLocaleString("en-US")} characters long; only the first ${read.toLocaleString("en-US")} were read, and the rest would reach the model unchecked.`,
    });
  return { verdict, findings };
}
