import type { Skill } from "./skill";
import { MAX_SKILL_CODE_BYTES, MAX_SKILL_DESCRIPTION_CHARS, SKILL_NAME_PATTERN } from "./names";

/** A saved skill as a shared store keeps it: what the files store splits into `<name>.ts` and `<name>.json`, in one record. */
type SkillRecord = RecordedSkill & { principal: string };

/** What a record holds of a skill (its origin is "saved"). */
export type RecordedSkill = Omit<Skill, "origin">;

/** The record of `principal`'s skill, as text. */
export function skillRecord(principal: string, skill: RecordedSkill): string {
  const record: SkillRecord = {
    principal,
    name: skill.name,
    description: skill.description,
    code: skill.code,
    signature: skill.signature,
    savedAt: skill.savedAt,
    tools: skill.tools,
  };
  return JSON.stringify(record);
}

/** The skill a shared record holds, checked as a saved one is (bounded sizes, its own principal and name); undefined when it is not one. */
export function skillOfRecord(principal: string, name: string, text: string): RecordedSkill | undefined {
  if (text.length > 4 * MAX_SKILL_CODE_BYTES) return undefined;
  let record: Partial<SkillRecord>;
  try {
    record = JSON.parse(text) as Partial<SkillRecord>;
  } catch {
    return undefined;
  }
  const { code, description, signature, savedAt, tools } = record;
  // A record filed under another principal or name is not this one's skill, whatever wrote it.
  if (record.principal !== principal || record.name !== name || !SKILL_NAME_PATTERN.test(name)) return undefined;
  if (typeof code !== "string" || Buffer.byteLength(code, "utf8") > MAX_SKILL_CODE_BYTES) return undefined;
  if (typeof description !== "string" || description.length > MAX_SKILL_DESCRIPTION_CHARS) return undefined;
  if (typeof signature !== "string" || typeof savedAt !== "string" || typeof tools !== "object" || tools === null) return undefined;
  return { name, description, code, signature: signature.slice(0, 2_000), savedAt, tools };
}
