export { PROJECT_SKILLS_DIR, attachSkills } from "./attach";
export { SkillLibrary } from "./library";
export type { ListedSkill, Skill, SkillLibraryOptions } from "./library";
export { MAX_SKILL_CODE_BYTES, SKILLS_PREFIX, SKILL_NAME_PATTERN, checkSkillName, skillSpecifier } from "./names";
export { typeCheckSkill } from "./typecheck";
export type { SkillCheckInput, SkillCheckResult, SkillImport } from "./typecheck";
