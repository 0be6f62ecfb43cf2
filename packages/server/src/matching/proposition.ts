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
import { MONTHS, STOPWORDS, stem } from "./text";

const GROUP_OF = new Map<string, string>();
for (const [group, members] of Object.entries(predicates.groups))
  for (const word of members) GROUP_OF.set(word, `=${group}`);

/** Each synonym group's concept -> the first characters of the words that stand for it. */
const GROUP_INITIALS = new Map<string, Set<number>>();
for (const [word, concept] of GROUP_OF) {
  const initials = GROUP_INITIALS.get(concept) ?? new Set<number>();
  GROUP_INITIALS.set(concept, initials);
  initials.add(word.charCodeAt(0));
}

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
  const initials = GROUP_INITIALS.get(concept);
  for (const w of words) {
    if (mayStandFor(w, 0, w.length, concept, initials) && conceptOf(w) === concept) return true;
    if (!w.includes("-")) continue;
    // The parts of a hyphenated word, read in place (no array of parts per word scanned).
    for (let start = 0; ; ) {
      const hyphen = w.indexOf("-", start);
      const end = hyphen < 0 ? w.length : hyphen;
      if (partStandsFor(w, start, end, concept, initials)) return true;
      if (hyphen < 0) break;
      start = hyphen + 1;
    }
  }
  return false;
}

/** Whether `w.slice(start, end)`, a part of a hyphenated word longer than one letter, stands for `concept`. */
function partStandsFor(
  w: string,
  start: number,
  end: number,
  concept: string,
  initials: ReadonlySet<number> | undefined,
): boolean {
  return (
    end - start > 1 &&
    mayStandFor(w, start, end, concept, initials) &&
    conceptOf(w.slice(start, end)) === concept
  );
}

/**
 * A cheap test that `conceptOf(w.slice(start, end)) === concept` needs to pass, so that a scan of a
 * market's words looks up the concept of only the few words that could stand for it (those lookups
 * were most of a comparison's time). A stem is a prefix of its word; a synonym group's concept comes
 * from a member of the group, alone or with a suffix, so from a word that starts as a member does.
 */
function mayStandFor(
  w: string,
  start: number,
  end: number,
  concept: string,
  initials: ReadonlySet<number> | undefined,
): boolean {
  return (
    (end - start >= concept.length && w.startsWith(concept, start)) ||
    initials?.has(w.charCodeAt(start)) === true
  );
}

/**
 * The predicate of a question: its words that are not names (any of `names`), dates, numbers,
 * stopwords or framing, as concept -> the word as written.
 */
export function predicateOf(questionWords: string[], ...names: ReadonlySet<string>[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of questionWords) {
    if (raw.includes("-") && !DIGIT.test(raw))
      for (const w of raw.split("-")) addPredicateWord(out, w, names);
    else addPredicateWord(out, raw, names);
  }
  return out;
}

/** Adds `w` to a predicate (concept -> the word as written) unless it is a name, a date, a number, a stopword or framing. */
function addPredicateWord(out: Map<string, string>, w: string, names: readonly ReadonlySet<string>[]): void {
  if ((w.length < 3 && w !== "us") || DIGIT.test(w) || w.includes("$") || w.includes("%")) return;
  // The plural-folding stem entity keys use ("holmes" -> "holme"), to tell a name from a word.
  const stemmed = stem(w);
  // "us" is a place ("meet next in the United States"), though too common to be a name.
  if (STOPWORDS.has(w) || (CAP_STOP.has(w) && w !== "us") || FRAME_WORDS.has(w) || FRAME_WORDS.has(stemmed))
    return;
  if (MONTHS[w] !== undefined) return;
  if (TEAM_SET.has(w)) return;
  for (const set of names) if (set.has(w) || set.has(stemmed)) return;
  const concept = conceptOf(w);
  if (!out.has(concept)) out.set(concept, w);
}

/** A constant of the module: a pattern written inside a function is a new RegExp object each time it runs. */
const DIGIT = /\d/;

/** The words of `predicate` whose concept the other market's text (its words) never uses. */
export function uncoveredWords(predicate: Map<string, string>, otherWords: Iterable<string>): string[] {
  const out: string[] = [];
  // Keys, then each word: destructuring the entries made an array of each.
  for (const concept of predicate.keys())
    if (!usesConcept(otherWords, concept)) out.push(predicate.get(concept)!);
  return out;
}
