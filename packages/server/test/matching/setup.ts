/**
 * Shared set-up for the matching suites: an app (SQLite, or PostgreSQL when TEST_DATABASE_URL is
 * set) whose matching service feeds a scripted matcher, two test venues with a few markets, and
 * helpers to sync the catalog, script verdicts and read `market.matched` events.
 *
 * The scripted matcher stands in for the real one (src/matching/matcher.ts, written separately):
 * tests say which verdicts `match(m)` returns for which market, so persistence, curation and
 * grouping are tested on their own. real-matcher.test.ts runs the real Matcher.
 */
import type { FastifyInstance } from "fastify";
import { vi } from "vitest";
import { type BuildOptions, buildApp } from "../../src/app";
import { type Config, testConfig } from "../../src/config";
import { type RecordedEvent, START_CURSOR } from "../../src/events/outbox";
import { type Clock, ManualClock } from "../../src/infra/clock";
import { dropSchema } from "../../src/infra/db/store";
import type { MatcherLike } from "../../src/matching/runner";
import {
  inverseRelation,
  type MatchableMarket,
  type MatchVerdict,
  type Polarity,
  type Relation,
} from "../../src/matching/types";
import { createRuntime } from "../../src/runtime";
import type { VenueEvent, VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, signup, type TestApp } from "../support/app";
import { POSTGRES_URL, type StoreBackend, uniqueName } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

/**
 * A matcher whose verdicts the test writes: `script(a, b, …)` makes `match(a)` return that verdict on
 * b, and `match(b)` the same verdict read from b's side (as the real matcher finds a pair from
 * either market), once both are indexed.
 */
export class ScriptedMatcher implements MatcherLike {
  readonly indexed = new Map<string, MatchableMarket>();
  /** Market ids passed to `match`, in order. */
  readonly calls: string[] = [];
  readonly #script = new Map<string, Map<string, MatchVerdict>>();

  add(market: MatchableMarket): void {
    this.indexed.set(market.id, market);
  }
  remove(id: string): void {
    this.indexed.delete(id);
  }
  has(id: string): boolean {
    return this.indexed.has(id);
  }
  match(market: MatchableMarket): MatchVerdict[] {
    this.calls.push(market.id);
    const out: MatchVerdict[] = [];
    for (const verdicts of this.#script.values()) {
      for (const v of verdicts.values()) {
        if (v.marketA === market.id && this.indexed.has(v.marketB)) out.push(structuredClone(v));
        if (
          v.marketB === market.id &&
          this.indexed.has(v.marketA) &&
          !this.#script.get(market.id)?.has(v.marketA)
        ) {
          out.push({
            ...structuredClone(v),
            marketA: v.marketB,
            marketB: v.marketA,
            relation: inverseRelation(v.relation),
          });
        }
      }
    }
    return out;
  }

  /** From now on, matching `a` finds `b` with this verdict (replacing an earlier one on the pair). */
  script(
    a: string,
    b: string,
    verdict: {
      relation: Relation;
      confidence: number;
      polarity?: Polarity;
      reasons?: string[];
      blockers?: string[];
      caveats?: string[];
    },
  ): void {
    const mine = this.#script.get(a) ?? new Map<string, MatchVerdict>();
    mine.set(b, {
      marketA: a,
      marketB: b,
      relation: verdict.relation,
      polarity:
        verdict.polarity ??
        (verdict.relation === "complement" || verdict.relation === "disjoint" ? "inverted" : "same"),
      confidence: verdict.confidence,
      reasons: verdict.reasons ?? [`scripted ${verdict.relation}`],
      blockers: verdict.blockers ?? [],
      caveats: verdict.caveats ?? [],
    });
    this.#script.set(a, mine);
  }

  clearCalls(): void {
    this.calls.length = 0;
  }
}

/** Auto-acceptable identity (confidence above AUTO_ACCEPT_CONFIDENCE, no blockers). */
export const SURE = { relation: "identity" as const, confidence: 0.97 };
/** An identity the matcher is unsure of: stays a candidate. */
export const UNSURE = { relation: "identity" as const, confidence: 0.6 };

export type MatchingTestApp = TestApp & {
  matcher: ScriptedMatcher;
  polymarket: TestVenue;
  kalshi: TestVenue;
  /** Syncs both venues' catalogs and waits for the matching runs they start. */
  sync(): Promise<void>;
};

export interface MatchingAppOptions {
  store?: StoreBackend;
  config?: Partial<Config>;
  matcher?: MatcherLike;
  /** Other venue adapters (the real ones against the fake venues) instead of the two TestVenues. */
  venues?: ReadonlyMap<VenueId, Venue>;
}

function event(
  venue: VenueId,
  key: string,
  title: string,
  category: string,
  marketIds: string[],
): VenueEvent {
  return {
    id: `${venue}:${key}`,
    venue,
    venueEventId: key,
    title,
    category,
    marketIds,
    closeTime: null,
    url: null,
    mutuallyExclusive: false,
  };
}

/**
 * Two venues: Polymarket P1–P4 (P1, P2 in the event "polymarket:FED"), Kalshi K1–K4 (K1 in
 * "kalshi:FEDDEC"); distinct titles, so searches can tell them apart.
 */
export function matchingVenues(): { polymarket: TestVenue; kalshi: TestVenue } {
  const polymarket = new TestVenue("polymarket");
  const kalshi = new TestVenue("kalshi");
  const pm = (key: string, over: Partial<VenueMarket>) => testMarket("polymarket", key, over);
  const k = (key: string, over: Partial<VenueMarket>) => testMarket("kalshi", key, over);
  polymarket.set(
    pm("P1", {
      eventId: "polymarket:FED",
      title: "Fed cuts 25 bps in December?",
      question: "Fed cuts 25 bps in December?",
      bestBid: 590_000,
      bestAsk: 610_000,
    }),
    pm("P2", {
      eventId: "polymarket:FED",
      title: "Fed holds in December?",
      question: "Fed holds in December?",
    }),
    pm("P3", { title: "Bitcoin above 150k on Dec 31?", question: "Bitcoin above 150k on Dec 31?" }),
    pm("P4", { title: "Lakers win the title?", question: "Lakers win the title?" }),
  );
  kalshi.set(
    k("K1", {
      eventId: "kalshi:FEDDEC",
      title: "Fed decision December: cut 25bps",
      question: "Fed decision December: cut 25bps",
      bestBid: 630_000,
      bestAsk: 650_000,
    }),
    k("K2", { title: "Fed rate unchanged in December", question: "Fed rate unchanged in December" }),
    k("K3", { title: "BTC over 150,000 at year end", question: "BTC over 150,000 at year end" }),
    k("K4", { title: "Celtics win the title", question: "Celtics win the title" }),
  );
  polymarket.events = [
    event("polymarket", "FED", "Fed decision in December", "Economy", ["polymarket:P1", "polymarket:P2"]),
  ];
  kalshi.events = [event("kalshi", "FEDDEC", "Fed decision in Dec 2026", "Economics", ["kalshi:K1"])];
  return { polymarket, kalshi };
}

export async function matchingApp(options: MatchingAppOptions = {}): Promise<MatchingTestApp> {
  const store = options.store ?? "sqlite";
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const schema = store === "postgres" ? uniqueName("t") : undefined;
  const config = testConfig({
    ...(store === "postgres" ? { database: { kind: "postgres" as const, url: POSTGRES_URL! } } : {}),
    matchingEnabled: true,
    ...options.config,
  });
  const runtime = await createRuntime(config, {
    clock: clock as Clock,
    redisPrefix: `${uniqueName("cbtest")}:`,
    ...(schema ? { store: { schema, poolSize: 4 } } : {}),
  });
  const { polymarket, kalshi } = matchingVenues();
  const matcher = (options.matcher ?? new ScriptedMatcher()) as ScriptedMatcher;
  const build: BuildOptions = {
    venues:
      options.venues ??
      new Map<VenueId, Venue>([
        ["polymarket", polymarket],
        ["kalshi", kalshi],
      ]),
    matcher,
  };
  const { app, services, stream, metrics } = await buildApp(runtime, build);
  return {
    app,
    services,
    stream,
    metrics,
    runtime,
    clock,
    matcher,
    polymarket,
    kalshi,
    async sync() {
      await services.catalog.syncVenue("polymarket");
      await services.catalog.syncVenue("kalshi");
      await services.matching.idle();
    },
    async close() {
      await app.close();
      await runtime.close();
      if (schema) await dropSchema(POSTGRES_URL!, schema);
    },
  };
}

/** An account with a read-only key and an admin key. */
export async function keys(app: FastifyInstance) {
  const { session, accountId } = await signup(app);
  const read = (await createKey(app, session, { type: "read_only" })).key;
  const admin = (await createKey(app, session, { type: "admin" })).key;
  return { session, accountId, read, admin };
}

/** Keys of an account the CLI made an operator: its live admin key curates matches. */
export async function operatorKeys(t: TestApp) {
  const made = await keys(t.app);
  await t.services.accounts.update(made.accountId, { operator: true });
  return made;
}

export async function call(
  app: FastifyInstance,
  key: string,
  method: "GET" | "POST",
  url: string,
  payload?: Record<string, unknown>,
) {
  return app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
}

/** The stored pair of two markets (canonical order), straight from the table. */
export async function pairRow(t: TestApp, a: string, b: string) {
  return t.runtime.store.db
    .selectFrom("matches")
    .selectAll()
    .where("market_a", "=", a)
    .where("market_b", "=", b)
    .executeTakeFirst();
}

export async function allPairs(t: TestApp) {
  return t.runtime.store.db.selectFrom("matches").selectAll().orderBy("id").execute();
}

/**
 * Every `market.matched` event, read through the outbox once all stored ones are visible to it (on
 * PostgreSQL the outbox hides rows while older transactions still run).
 */
export async function matchedEvents(t: TestApp): Promise<RecordedEvent<"market.matched">[]> {
  await t.services.matching.idle();
  const db = t.runtime.store.db;
  const stored = await db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("type", "=", "market.matched")
    .executeTakeFirstOrThrow();
  let events: RecordedEvent<"market.matched">[] = [];
  await vi.waitFor(
    async () => {
      events = (await t.services.outbox.readAfter(db, START_CURSOR, 10_000)).filter(
        (e): e is RecordedEvent<"market.matched"> => e.type === "market.matched",
      );
      if (events.length !== Number(stored.n)) throw new Error("outbox not caught up yet");
    },
    { timeout: 10_000 },
  );
  return events;
}

/** Changes a market on its venue (the next sync stores it). */
export function edit(venue: TestVenue, id: string, changes: Partial<VenueMarket>): void {
  const market = venue.markets.get(id);
  if (!market) throw new Error(`no market ${id}`);
  venue.set({ ...market, ...changes });
}
