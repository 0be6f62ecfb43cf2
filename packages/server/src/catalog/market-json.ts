/**
 * A market as the API shows it (`MarketSchema`), and its JSON written by hand, as UTF-8 bytes.
 * `GET /v1/markets` and `GET /v1/markets/{market_id}` send these bytes as they are, so
 * test/catalog/markets-body.test.ts holds them to the routes' declared schemas, byte for byte what
 * Fastify's serializer would write.
 *
 * A market's fields are of two kinds. Most change only when a catalog sync writes the market: they
 * are serialized once (rules text and all). The rest change in between (`MarketState`: the status a
 * venue's feed reports before the next sync, and the live prices): a new state writes those few
 * fields again and copies the others' bytes as they are (`MarketJson.withState`). A page is the
 * markets' bytes copied one after the other, or with `fields=` (`Projection`) the named fields'.
 */
import { feesView } from "@crossbook/fees";
import type { Static } from "typebox";
import { pageMeta } from "../http/envelope";
import { validationError } from "../http/errors";
import { microsToNumber } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import { storedSchedule } from "./fees";
import type { MarketRow } from "./repo";
import { MarketSchema } from "./schemas";

export type MarketView = Static<typeof MarketSchema>;
export type MarketField = keyof MarketView;

const num = (v: number | null) => (v === null ? null : microsToNumber(v));

function feesOf(row: MarketRow) {
  const schedule = storedSchedule(row);
  return schedule ? feesView(schedule) : null;
}

export function marketView(row: MarketRow): MarketView {
  const outcomes = JSON.parse(row.outcomes) as {
    yes: { label: string; venueTokenId: string };
    no: { label: string; venueTokenId: string };
  };
  return {
    id: row.id,
    venue: row.venue as VenueId,
    venue_market_id: row.venue_market_id,
    event_id: row.event_id,
    title: row.title,
    question: row.question,
    rules: row.rules,
    settlement_source: row.settlement_source,
    outcomes: {
      yes: { label: outcomes.yes.label, token_id: outcomes.yes.venueTokenId },
      no: { label: outcomes.no.label, token_id: outcomes.no.venueTokenId },
    },
    status: row.status as "open" | "closed" | "resolved",
    resolution: row.resolution as "yes" | "no" | "void" | null,
    open_time: row.open_time,
    close_time: row.close_time,
    tick_size: microsToNumber(row.tick_size),
    min_size: microsToNumber(row.min_size),
    volume: microsToNumber(row.volume),
    volume_24h: microsToNumber(row.volume_24h),
    liquidity: microsToNumber(row.liquidity),
    url: row.url,
    last_price: num(row.last_price),
    best_bid: num(row.best_bid),
    best_ask: num(row.best_ask),
    fees: feesOf(row),
    updated_at: row.updated_at,
  };
}

// --- fields ------------------------------------------------------------------------------------------

/** Every field of a market, in the order the schema declares (and the JSON writes) them. */
export const MARKET_FIELDS = Object.keys(MarketSchema.properties) as MarketField[];

/** The fields that change between two syncs of a market, written from its `MarketState`. */
const STATE_FIELDS = ["status", "resolution", "last_price", "best_bid", "best_ask", "updated_at"] as const;
type StateField = (typeof STATE_FIELDS)[number];
const isStateField = (field: MarketField): field is StateField =>
  (STATE_FIELDS as readonly string[]).includes(field);
/** Per field of MARKET_FIELDS: the state field it is, or null for a static one. */
const STATE_AT = MARKET_FIELDS.map((field) => (isStateField(field) ? field : null));

/** The fields that change between two syncs: the status a feed reports, the live prices (micro-units). */
export interface MarketState {
  status: string;
  resolution: string | null;
  lastPrice: number | null;
  bestBid: number | null;
  bestAsk: number | null;
  updatedAt: string;
}

export function stateOf(row: MarketRow): MarketState {
  return {
    status: row.status,
    resolution: row.resolution,
    lastPrice: row.last_price === null ? null : Number(row.last_price),
    bestBid: row.best_bid === null ? null : Number(row.best_bid),
    bestAsk: row.best_ask === null ? null : Number(row.best_ask),
    updatedAt: row.updated_at,
  };
}

const priceJson = (v: number | null) => (v === null ? "null" : String(microsToNumber(v)));

function stateJson(field: StateField, state: MarketState): string {
  switch (field) {
    case "status":
      return `"status":${JSON.stringify(state.status)}`;
    case "resolution":
      return `"resolution":${JSON.stringify(state.resolution)}`;
    case "last_price":
      return `"last_price":${priceJson(state.lastPrice)}`;
    case "best_bid":
      return `"best_bid":${priceJson(state.bestBid)}`;
    case "best_ask":
      return `"best_ask":${priceJson(state.bestAsk)}`;
    case "updated_at":
      return `"updated_at":${JSON.stringify(state.updatedAt)}`;
  }
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;

/**
 * A market's JSON object, `{"id":…,…,"updated_at":…}`, as UTF-8 bytes of its own, and where each
 * field (`"name":value`) lies in them, so a projection copies fields without parsing anything.
 */
export class MarketJson {
  readonly bytes: Buffer;
  /** Field i of MARKET_FIELDS is bytes at[i] to at[i + 1] - 1 (before its comma, or the last brace). */
  readonly #at: Int32Array;

  private constructor(bytes: Buffer, at: Int32Array) {
    this.bytes = bytes;
    this.#at = at;
  }

  /** Every field written: the static ones from the view, the state ones from `state`. */
  static of(view: MarketView, state: MarketState): MarketJson {
    // Nested objects (outcomes, fees) come out in their schema's key order (marketView, feesView).
    const pieces = MARKET_FIELDS.map((field, i) => {
      const stateField = STATE_AT[i];
      return stateField
        ? stateJson(stateField, state)
        : `${JSON.stringify(field)}:${JSON.stringify(view[field])}`;
    });
    const at = new Int32Array(pieces.length + 1);
    at[0] = 1;
    for (let i = 0; i < pieces.length; i++) at[i + 1] = at[i]! + Buffer.byteLength(pieces[i]!) + 1;
    const bytes = Buffer.allocUnsafeSlow(at[pieces.length]!);
    bytes.write(`{${pieces.join(",")}}`, 0);
    return new MarketJson(bytes, at);
  }

  /** The same market in another state: its state fields written anew, the other fields' bytes copied. */
  withState(state: MarketState): MarketJson {
    const n = MARKET_FIELDS.length;
    const texts: Array<string | null> = new Array(n);
    const at = new Int32Array(n + 1);
    at[0] = 1;
    for (let i = 0; i < n; i++) {
      const stateField = STATE_AT[i];
      const text = stateField ? stateJson(stateField, state) : null;
      texts[i] = text;
      at[i + 1] = at[i]! + (text !== null ? Buffer.byteLength(text) : this.fieldLength(i)) + 1;
    }
    // Bytes of its own (not a slice of Node's shared pool): a market's JSON lives until the next sync.
    const bytes = Buffer.allocUnsafeSlow(at[n]!);
    bytes[0] = OPEN_BRACE;
    for (let i = 0; i < n; i++) {
      const text = texts[i];
      if (text !== undefined && text !== null) bytes.write(text, at[i]!);
      else this.bytes.copy(bytes, at[i]!, this.#at[i]!, this.#at[i + 1]! - 1);
      bytes[at[i + 1]! - 1] = i === n - 1 ? CLOSE_BRACE : COMMA;
    }
    return new MarketJson(bytes, at);
  }

  /** Bytes of field i (of MARKET_FIELDS), `"name":value`. */
  fieldLength(i: number): number {
    return this.#at[i + 1]! - 1 - this.#at[i]!;
  }

  /** The object as `shown` asks for it, in bytes. */
  length(shown: Projection): number {
    if (shown === ALL_FIELDS) return this.bytes.length;
    const { runs } = shown;
    let length = 1 + runs.length; // the braces, and the commas between runs
    for (const [from, to] of runs) length += this.#at[to]! - 1 - this.#at[from]!;
    return length;
  }

  /** Copies the object as `shown` asks for it into `target` at `offset`; returns where it ends. */
  copy(shown: Projection, target: Buffer, offset: number): number {
    if (shown === ALL_FIELDS) return offset + this.bytes.copy(target, offset);
    const { runs } = shown;
    let at = offset;
    target[at++] = OPEN_BRACE;
    for (let k = 0; k < runs.length; k++) {
      if (k > 0) target[at++] = COMMA;
      const [from, to] = runs[k]!;
      // Fields next to each other are one stretch of bytes, commas between them included.
      at += this.bytes.copy(target, at, this.#at[from]!, this.#at[to]! - 1);
    }
    target[at++] = CLOSE_BRACE;
    return at;
  }
}

/** Which fields of a market an answer shows (`fields=`). */
export interface Projection {
  /** The fields shown, in schema order. */
  readonly fields: readonly MarketField[];
  /** The same as runs of neighbours in MARKET_FIELDS: [from, to) indices. */
  readonly runs: ReadonlyArray<readonly [number, number]>;
  /** `fields` joined by commas: the same for every request asking for the same fields. */
  readonly key: string;
}

function projection(fields: readonly MarketField[]): Projection {
  const runs: Array<[number, number]> = [];
  for (const field of fields) {
    const i = MARKET_FIELDS.indexOf(field);
    const last = runs[runs.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  return { fields, runs, key: fields.join(",") };
}

/** Every field: the answer without `fields=`. */
export const ALL_FIELDS = projection(MARKET_FIELDS);

/**
 * `fields=id,title,best_bid` as a projection (every field when absent). Names are trimmed; an
 * unknown name, or none, is a 400 on `query.fields`.
 */
export function parseFields(raw: string | undefined): Projection {
  if (raw === undefined) return ALL_FIELDS;
  const asked = new Set(
    raw
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name.length > 0),
  );
  if (asked.size === 0) {
    throw validationError({ "query.fields": "must name at least one field, e.g. id,title,best_bid" });
  }
  const unknown = [...asked].filter((name) => !(MARKET_FIELDS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw validationError({
      "query.fields": `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `"${n}"`).join(", ")} (known: ${MARKET_FIELDS.join(", ")})`,
    });
  }
  if (asked.size === MARKET_FIELDS.length) return ALL_FIELDS;
  return projection(MARKET_FIELDS.filter((field) => asked.has(field)));
}

/** One market straight from its stored row (no live quote): a text search's, or one asked for by id. */
export function rowJson(row: MarketRow): MarketJson {
  return MarketJson.of(marketView(row), stateOf(row));
}

/** The envelope of one page of markets, `meta {page, limit, total}` included. */
export function writePage(
  markets: readonly MarketJson[],
  shown: Projection,
  page: { limit: number; offset: number },
  total: number,
): Buffer {
  const meta = pageMeta(page.offset, page.limit, total);
  const head = '{"success":true,"data":[';
  const tail = `],"meta":{"page":${meta.page},"limit":${meta.limit},"total":${meta.total}}}`;
  let length = head.length + tail.length + Math.max(0, markets.length - 1);
  for (const market of markets) length += market.length(shown);
  const out = Buffer.allocUnsafe(length);
  let at = out.write(head, 0, "latin1");
  for (let i = 0; i < markets.length; i++) {
    if (i > 0) out[at++] = COMMA;
    at = markets[i]!.copy(shown, out, at);
  }
  out.write(tail, at, "latin1");
  return out;
}

/** The envelope of one market. */
export function writeOne(market: MarketJson, shown: Projection): Buffer {
  const head = '{"success":true,"data":';
  const out = Buffer.allocUnsafe(head.length + market.length(shown) + 1);
  const at = market.copy(shown, out, out.write(head, 0, "latin1"));
  out[at] = CLOSE_BRACE;
  return out;
}
