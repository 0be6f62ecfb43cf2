/**
 * What a question asks to happen, beyond who and when: its predicate words ("arrested", "out",
 * "talk", "meet in person", "best model"). Two markets about the same person and date are the same
 * contract only if each one's predicate is found somewhere in the other's text; "Netanyahu out by
 * 2027" and "Netanyahu arrested before 2027" share a subject and a deadline and nothing else.
 *
 * Words are compared as concepts: a synonym group of `knowledge/predicates.json`, else a crude stem
 * (lowercase, common suffixes dropped, the first five letters), so "nominee" meets "nomination" and
 * "presidency" meets "presidential" without a dictionary.
 */

import { CAP_STOP, TEAM_SET } from "./entities";
import predicates from "./knowledge/predicates.json" with { type: "json" };
import { MONTHS, STOPWORDS } from "./text";

const GROUP_OF = new Map<string, string>();
for (const [group, members] of Object.entries(predicates.groups))
  for (const word of members) GROUP_OF.set(word, `=${group}`);

/**
 * Words that frame a question without saying what must happen: the venues add or drop them freely
 * ("the Republican Party", "the House race" / "the House seat", "the next …", "the 2026-27 season").
 */
const FRAME_WORDS = new Set(
  (
    "will would next season regular party candidate candidates race seat seats contest official officially " +
    "election elections midterm midterms following after confirmed serve serves formation formed " +
    "head government local " +
    "market listed team teams player players people person anyone someone somebody who whom year years " +
    "upcoming current currently new another any ever again still just also already formally publicly " +
    "get gets got become becomes became named name take takes place award awards held " +
    "there here one two three exact exactly total number amount " +
    "league final finals game games match matches series event events edition round winner question day " +
    "during between end start beginning within than least least most more less lead leads"
  ).split(" "),
);

/** The concept a word stands for: its synonym group, else its stem. */
export function conceptOf(word: string): string {
  // Words repeat across a catalog's rules far more than they vary: remember the answers.
  let concept = conceptCache.get(word);
  if (concept === undefined) {
    concept = conceptUncached(word);
    if (conceptCache.size >= 50_000) conceptCache.clear();
    conceptCache.set(word, concept);
  }
  return concept;
}

const conceptCache = new Map<string, string>();

function conceptUncached(word: string): string {
  const group = GROUP_OF.get(word);
  if (group) return group;
  let w = word;
  for (const suffix of ["ations", "ation", "ments", "ment", "ings", "ing", "ied", "ies", "ed", "es", "s"]) {
    if (w.length - suffix.length >= 4 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  const stemmed = w.length > 5 ? w.slice(0, 5) : w;
  return GROUP_OF.get(w) ?? stemmed;
}

/**
 * Whether any of a market's words (a hyphenated word also by its parts) stands for `concept`. A scan
 * rather than a stored set of every word's concept: asked only of the few predicate words and names
 * a comparison needs, and `conceptOf` answers from its memo.
 */
export function usesConcept(words: Iterable<string>, concept: string): boolean {
  for (const w of words) {
    if (conceptOf(w) === concept) return true;
    if (w.includes("-"))
      for (const part of w.split("-")) if (part.length > 1 && conceptOf(part) === concept) return true;
  }
  return false;
}

/**
 * The predicate of a question: its words that are not names, dates, numbers, stopwords or framing,
 * as concept -> the word as written.
 */
export function predicateOf(questionWords: string[], names: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of questionWords) {
    for (const w of raw.includes("-") && !/\d/.test(raw) ? raw.split("-") : [raw]) {
      if ((w.length < 3 && w !== "us") || /\d/.test(w) || w.includes("$") || w.includes("%")) continue;
      // "us" is a place ("meet next in the United States"), though too common to be a name.
      if (
        STOPWORDS.has(w) ||
        (CAP_STOP.has(w) && w !== "us") ||
        FRAME_WORDS.has(w) ||
        FRAME_WORDS.has(stemOf(w))
      )
        continue;
      if (MONTHS[w] !== undefined) continue;
      if (TEAM_SET.has(w) || names.has(w) || names.has(stemOf(w))) continue;
      const concept = conceptOf(w);
      if (!out.has(concept)) out.set(concept, w);
    }
  }
  return out;
}

/** The plural-folding stem entity keys use ("holmes" -> "holme"), to tell a name from a word. */
function stemOf(word: string): string {
  if (word.length > 4 && /[a-z]s$/.test(word) && !/ss$|us$|is$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The words of `predicate` whose concept the other market's text (its words) never uses. */
export function uncoveredWords(predicate: Map<string, string>, otherWords: Iterable<string>): string[] {
  const out: string[] = [];
  for (const [concept, word] of predicate) if (!usesConcept(otherWords, concept)) out.push(word);
  return out;
}
