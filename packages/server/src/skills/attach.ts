import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Codemux } from "../core";
import type { SessionInfo } from "@codemux/core";
import { SkillLibrary, type SkillLibraryOptions } from "./library";

const libraries = new WeakMap<Codemux, SkillLibrary>();

/** The folder of skills a team commits beside its code, read when it exists in the folder codemux starts in. */
export const PROJECT_SKILLS_DIR = join(".codemux", "skills");

/**
 * The core's skill library, made on first use with the core's data folder and `./.codemux/skills`
 * (when it exists), and importable by snippets from then on. With options, the library is made
 * anew from them (replacing the one before), for front ends that choose the folders. Surfaces call
 * it when made, so skills are there from the first request.
 */
export function attachSkills(core: Codemux, options?: SkillLibraryOptions): SkillLibrary {
  const existing = libraries.get(core);
  if (existing && options === undefined) return existing;
  if (existing) {
    for (const document of core.catalog.documents("skill")) core.catalog.removeDocument("skill", document.id);
  }
  const projectDir = options?.projectDir ?? (existsSync(PROJECT_SKILLS_DIR) ? PROJECT_SKILLS_DIR : undefined);
  const dataDir = options?.dataDir ?? core.dataDir;
  const library = new SkillLibrary(core, { ...(dataDir !== undefined ? { dataDir } : {}), ...(projectDir !== undefined ? { projectDir } : {}) });
  libraries.set(core, library);
  // One source per core that asks whichever library is current (for the session's principal, once the core passes the session).
  if (!existing) core.moduleSources.push((specifier: string, session?: SessionInfo) => libraries.get(core)?.moduleSource(specifier, session));
  return library;
}
