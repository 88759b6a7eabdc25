import { describe, expect, it } from "vitest";
import { stem } from "../stem";
import { canBeVerb, isWord, phraseAt, relatedTerms } from "./lexicon";

describe("lexicon (generated from WordNet)", () => {
  it("relates a word to the words of its frequent senses, as stems", () => {
    expect(relatedTerms(stem("altitude"))?.get(stem("elevation"))).toBe(1);
    expect(relatedTerms(stem("link"))?.has(stem("relate"))).toBe(true);
  });

  it("finds phrasal verbs, whatever the form of their verb", () => {
    expect(phraseAt(["throwing", "away", "old", "commits"], 0)?.related.has(stem("discard"))).toBe(true);
    expect(phraseAt(["please", "look", "for", "code"], 1)).toMatchObject({ length: 2 });
    expect(phraseAt(["look", "at", "code"], 2)).toBeUndefined();
  });

  it("knows dictionary words from fragments, and which words can be verbs", () => {
    expect(isWord(stem("sea"))).toBe(true);
    expect(isWord("screensh")).toBe(false);
    expect(canBeVerb("shelve")).toBe(true);
    expect(canBeVerb("altitude")).toBe(false);
  });
});
