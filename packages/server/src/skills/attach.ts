import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Codemux } from "../core";
import { SkillLibrary, type SkillLibraryOptions } from "./library";

const libraries = new WeakMap<Codemux, SkillLibrary>();

/** The folder of skills a team commits beside its code, read when it exists in the folder codemux starts in. */
export const PROJECT_SKILLS_DIR = join(".codemux", "skills");

/**
 * Gives a core its skill library (`dataDir` and `projectDir` default to the core's data folder and
 * `./.codemux/skills` when it exists) and makes skills importable by snippets. Once per core: a
 * second call returns the first library. Surfaces call it when made, so skills are there from the
 * first request.
 */
export function attachSkills(core: Codemux, options?: SkillLibraryOptions): SkillLibrary {
  const existing = libraries.get(core);
  if (existing) return existing;
  const projectDir = options?.projectDir ?? (existsSync(PROJECT_SKILLS_DIR) ? PROJECT_SKILLS_DIR : undefined);
  const dataDir = options?.dataDir ?? core.dataDir;
  const library = new SkillLibrary(core, { ...(dataDir !== undefined ? { dataDir } : {}), ...(projectDir !== undefined ? { projectDir } : {}) });
  libraries.set(core, library);
  core.moduleSources.push(library.moduleSource);
  return library;
}
