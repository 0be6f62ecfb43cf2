/**
 * The real labelled set: Polymarket/Kalshi pairs whose text the venues wrote, kept outside the
 * repository (`../shared/matching/pairs.jsonl` beside the checkout; README there). It is read from
 * there, never copied in. Each record is turned back into the venues' own JSON (a Gamma market with
 * its event, a Kalshi market with its event) so that it reaches the matcher through the same
 * normalisers the adapters use, as a replay of a recorded listing would.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { PairRecord } from "./evaluate";

/** Where the real set lives unless `MATCHING_REAL_PAIRS` says otherwise: shared/ beside the checkout. */
export const REAL_PAIRS_DEFAULT = resolve(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "..",
  "shared",
  "matching",
  "pairs.jsonl",
);

export function realPairsPath(): string {
  return process.env.MATCHING_REAL_PAIRS ? resolve(process.env.MATCHING_REAL_PAIRS) : REAL_PAIRS_DEFAULT;
}

/** The real set's vocabulary: a relation for the tradable pairs, `related`/`unrelated` otherwise. */
export type RealLabel = "identity" | "complement" | "related" | "unrelated";

interface RealRecord {
  id: string;
  label: RealLabel;
  strict_label: RealLabel;
  note?: string;
  polymarket: Record<string, unknown>;
  kalshi: Record<string, unknown>;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const hex = (s: string) => createHash("sha256").update(s).digest("hex");
/** A uint256 in decimal derived from a string, as Gamma writes token ids. */
const tokenId = (s: string) => BigInt(`0x${hex(s)}`).toString(10);

/** A Gamma market (with its event) as the venue would have listed the recorded one. */
export function gammaPayload(pm: Record<string, unknown>): {
  event: Record<string, unknown>;
  market: Record<string, unknown>;
} {
  const id = str(pm.market_id) ?? str(pm.id) ?? "";
  const conditionId = /^0x[0-9a-fA-F]{64}$/.test(String(pm.id))
    ? String(pm.id)
    : `0x${hex(`condition:${id}`)}`;
  // Outcomes as listed, with the recorded YES label first (the adapter reads the first team as YES).
  let outcomes = Array.isArray(pm.outcomes) ? (pm.outcomes as string[]).map(String) : ["Yes", "No"];
  const yes = str(pm.yes_outcome);
  if (yes && outcomes.includes(yes) && outcomes[0] !== yes)
    outcomes = [yes, ...outcomes.filter((o) => o !== yes)];
  const eventTitle = str(pm.event_title) ?? null;
  const eventSlug = str(pm.event_slug) ?? (eventTitle ? slugOf(eventTitle) : `event-${id}`);
  const event = {
    id: String(Number.parseInt(hex(`event:${eventSlug}`).slice(0, 8), 16)),
    slug: eventSlug,
    title: eventTitle,
  };
  const market: Record<string, unknown> = {
    id,
    conditionId,
    slug: str(pm.slug) ?? slugOf(String(pm.question ?? id)),
    question: pm.question,
    description: pm.description,
    endDate: pm.end_date,
    outcomes: JSON.stringify(outcomes),
    clobTokenIds: JSON.stringify(outcomes.map((o) => tokenId(`${conditionId}:${o}`))),
    active: true,
    closed: false,
    archived: false,
    acceptingOrders: true,
    enableOrderBook: true,
    orderPriceMinTickSize: 0.01,
    orderMinSize: 5,
    negRisk: false,
    events: [event],
  };
  if (str(pm.group_item_title)) market.groupItemTitle = pm.group_item_title;
  return { event, market };
}

/** A Kalshi market (with its event) as the venue would have listed the recorded one. */
export function kalshiPayload(k: Record<string, unknown>): {
  event: Record<string, unknown>;
  market: Record<string, unknown>;
} {
  const ticker = String(k.ticker);
  const eventTicker = str(k.event_ticker) ?? ticker.slice(0, ticker.lastIndexOf("-"));
  const [primary, ...secondary] = String(k.rules_primary ?? "").split(" || ");
  const market: Record<string, unknown> = {
    ticker,
    event_ticker: eventTicker,
    market_type: "binary",
    title: k.title,
    yes_sub_title: k.yes_sub_title ?? "",
    no_sub_title: k.yes_sub_title ?? "",
    close_time: k.close_time,
    status: "active",
    rules_primary: primary,
    rules_secondary: secondary.join(" || "),
    price_level_structure: "linear_cent",
    price_ranges: [{ start: "0.0000", end: "1.0000", step: "0.0100" }],
  };
  for (const f of ["subtitle", "strike_type", "floor_strike", "cap_strike", "custom_strike"])
    if (k[f] !== undefined) market[f] = k[f];
  const event: Record<string, unknown> = {
    event_ticker: eventTicker,
    series_ticker: eventTicker.split("-")[0],
    title: k.event_title ?? k.title,
    sub_title: k.event_subtitle ?? "",
  };
  return { event, market };
}

function slugOf(text: string): string {
  return text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);
}

/**
 * A rough topic for the per-category figures (the real set does not carry one): from the Kalshi
 * series and both titles.
 */
export function categoryOf(r: RealRecord): string {
  const text =
    `${String(r.kalshi.ticker)} ${String(r.kalshi.title)} ${String(r.polymarket.question)} ${String(r.polymarket.event_title ?? "")}`.toLowerCase();
  if (/\b(fed|rate (cut|hike)|cpi|pce|inflation|gdp|unemployment|payrolls|bps)\b/.test(text))
    return "economics";
  if (/bitcoin|ethereum|solana|\bkxbtc|\bkxeth/.test(text)) return "crypto";
  if (/temperature|hottest|weather|rain|snow|\bkxhigh/.test(text)) return "weather";
  if (
    /\b(nfl|nba|nhl|mlb|wnba|ncaa|uefa|premier league|epl|bundesliga|serie a|ligue 1|la liga|champions league|europa|stanley cup|world series|super bowl|pro (football|basketball|baseball|hockey)|playoffs?|mvp|rookie|f1|grand prix|tennis|golf|cfp|afc|nfc|receiving|rushing|touchdowns?)\b/.test(
      text,
    )
  )
    return "sports";
  if (/\b(ai|openai|anthropic|gemini|grok|gpt|ipo|spacex|starship|tesla|apple|google|model)\b/.test(text))
    return "tech";
  if (/\b(grammy|oscar|album|film|movie|box office|emmy|song|billboard)\b/.test(text)) return "entertainment";
  if (
    /\b(election|nominee|nomination|president|presidential|senate|house|governor|mayor|prime minister|minister|party|republican|democrat|pardon|premier)\b/.test(
      text,
    )
  )
    return "politics";
  return "geopolitics";
}

/**
 * The real set as pair records in the venues' JSON. `label` is the relation to find; the strict label
 * (settlement-strict view) rides along as `strict`. Throws when the file is missing (see
 * `realPairsAvailable`).
 */
export function loadRealPairs(path = realPairsPath()): { file: string; records: PairRecord[] } {
  const records: PairRecord[] = [];
  const lines = readFileSync(path, "utf8").split("\n");
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let r: RealRecord;
    try {
      r = JSON.parse(line) as RealRecord;
    } catch (error) {
      throw new Error(`${path}:${i + 1}: not JSON (${(error as Error).message})`);
    }
    records.push({
      id: r.id,
      category: categoryOf(r),
      label: r.label,
      strict: r.strict_label,
      kind: r.label === r.strict_label ? r.label : `${r.label}/strict ${r.strict_label}`,
      why: r.note ?? "",
      polymarket: gammaPayload(r.polymarket),
      kalshi: kalshiPayload(r.kalshi),
    });
  }
  return { file: path, records };
}

export function realPairsAvailable(path = realPairsPath()): boolean {
  return existsSync(path);
}
