/**
 * What a live account's linked venue accounts hold, as the venues themselves report it (issue 19,
 * part 5): the positions crossbook shows beside its own, and what a live sell may draw on.
 *
 * Venue calls cost rate limit (Kalshi's Basic tier allows 20 reads a second for everything), so a
 * GET never goes to the venue by itself: each (account, venue) answer is kept for `maxAgeMs`
 * (VENUE_POSITIONS_MAX_AGE_SECONDS, default 30 s) and concurrent readers share one venue call. A
 * failed read is kept for at most 5 s, then tried again. crossbook's own live fills drop the kept
 * answer of that account and venue at once, so a fill never shows as a difference for the rest of
 * the period. A sell that needs the venue's holding reads an answer at most 5 s old.
 *
 * Nothing here throws for a venue that cannot be read: the answer says `unavailable` and why, and
 * callers serve what crossbook knows. Sandbox owners never reach this code's venue calls.
 */
import { createHash } from "node:crypto";
import type { CredentialsService } from "../credentials/service";
import { AppError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Logger } from "../infra/log";
import type { Owner } from "../ledger/orders-repo";
import type { Micros } from "../venues/decimal";
import { isVenueError } from "../venues/errors";
import type { Outcome, VenueId } from "../venues/model";
import { type MarketDataVenue, tradingVenueOf, type VenueCredentials } from "../venues/venue";

/** One position the venue reports for the account. */
export interface VenueHolding {
  venue: VenueId;
  marketId: string;
  outcome: Outcome;
  size: Micros;
  /** The venue's own average entry price (Polymarket `avgPrice`, Kalshi exposure / size), if any. */
  averagePrice: Micros | null;
}

/** One linked venue's answer. */
export interface VenueSnapshot {
  venue: VenueId;
  status: "ok" | "unavailable";
  /** Why it is unavailable: the venue error kind, `unreadable_credentials` or `disabled`. */
  reason: string | null;
  /** When the venue's positions were read (for `unavailable`, the last good read); null if never. */
  checkedAt: string | null;
  positions: VenueHolding[];
}

/** Venues that net YES against NO in one market (Kalshi: a negative `position_fp` is NO). */
export const NETTING_VENUES: ReadonlySet<VenueId> = new Set<VenueId>(["kalshi"]);

/**
 * crossbook's holding of `outcome` as a netting venue would show it: what it holds of the outcome
 * minus what it holds of the other one, never below zero. Other venues keep both legs apart.
 */
export function nettedSize(venue: VenueId, own: number, other: number): number {
  return NETTING_VENUES.has(venue) ? Math.max(0, own - other) : own;
}

/**
 * The id a venue-held position shows under: stable per account, market and outcome, so it can be
 * read again, and kept by the crossbook position that takes it over when it is sold.
 */
export function venuePositionId(accountId: string, marketId: string, outcome: string): string {
  const digest = createHash("sha256").update(`${accountId}\u0000${marketId}\u0000${outcome}`).digest("hex");
  return `vpos_${digest.slice(0, 24)}`;
}

export const DEFAULT_MAX_AGE_MS = 30_000;
/** A failed read is retried after this long at the latest. */
const FAILURE_MAX_AGE_MS = 5_000;
/** How old the answer a sell draws on may be. */
const SELL_MAX_AGE_MS = 5_000;
/** Cached answers kept before expired ones are swept (one per linked account and venue). */
const SWEEP_AT = 10_000;
/** Distinct differences remembered so each is logged once. */
const MISMATCHES_REMEMBERED = 10_000;

interface Entry {
  /** The credential row the answer was read with: a relink reads again. */
  credential: string;
  /** Clock time the answer came. */
  readAt: number;
  /** Clock time the entry stops being served. */
  expiresAt: number;
  snapshot: VenueSnapshot | null;
  pending: Promise<VenueSnapshot> | null;
}

export interface VenueHoldingsDeps {
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  credentials: Pick<CredentialsService, "list" | "open">;
  clock: Clock;
  log: Logger;
  /** How long a venue's answer is served before it is read again (default 30 s). */
  maxAgeMs?: number;
}

export class VenueHoldings {
  readonly #entries = new Map<string, Entry>();
  readonly #mismatches = new Set<string>();
  readonly #maxAgeMs: number;
  #mismatchCount = 0;

  constructor(private readonly deps: VenueHoldingsDeps) {
    this.#maxAgeMs = deps.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  }

  /** Differences between crossbook's positions and the venues' seen so far (each counted once). */
  get mismatchCount(): number {
    return this.#mismatchCount;
  }

  /** Every linked venue's answer for a live owner (none for sandbox owners); never throws for a venue. */
  async read(owner: Owner, maxAgeMs = this.#maxAgeMs): Promise<VenueSnapshot[]> {
    if (owner.environment !== "live") return [];
    const rows = await this.deps.credentials.list(owner);
    return Promise.all(
      rows.map((row) =>
        this.#snapshot(owner.accountId, row.venue as VenueId, `${row.id}@${row.updated_at}`, maxAgeMs, () =>
          this.deps.credentials.open(row),
        ),
      ),
    );
  }

  /**
   * How many contracts of a market's outcome the venue holds for a live owner, read at most a few
   * seconds ago: what a sell beyond crossbook's own contracts may draw on. A venue that cannot be
   * read is a 503 (the sell cannot be checked).
   */
  async holding(
    owner: Owner,
    venue: VenueId,
    marketId: string,
    outcome: Outcome,
  ): Promise<{ size: Micros; checkedAt: string | null }> {
    const snapshots = await this.read(owner, Math.min(this.#maxAgeMs, SELL_MAX_AGE_MS));
    const snapshot = snapshots.find((s) => s.venue === venue);
    if (!snapshot)
      throw new AppError(
        "VENUE_NOT_LINKED",
        `Link a ${venue} account (POST /v1/venue-credentials) before trading live on ${venue}`,
        { venue },
      );
    if (snapshot.status !== "ok")
      throw new AppError(
        "VENUE_UNAVAILABLE",
        `Could not read the positions of the linked ${venue} account (${snapshot.reason}); try again shortly`,
        { venue, reason: snapshot.reason ?? "unknown" },
      );
    const held = snapshot.positions.find((p) => p.marketId === marketId && p.outcome === outcome);
    return { size: held?.size ?? 0, checkedAt: snapshot.checkedAt };
  }

  /** crossbook changed what it holds at this venue for the account: read the venue afresh next time. */
  invalidate(accountId: string, venue: VenueId): void {
    this.#entries.delete(key(accountId, venue));
  }

  /** A difference between crossbook's position and the venue's: logged and counted once each. */
  noteMismatch(fields: {
    accountId: string;
    venue: VenueId;
    marketId: string;
    outcome: string;
    crossbookSize: Micros;
    venueSize: Micros;
  }): void {
    const id = [
      fields.accountId,
      fields.marketId,
      fields.outcome,
      fields.crossbookSize,
      fields.venueSize,
    ].join("\u0000");
    if (this.#mismatches.has(id)) return;
    if (this.#mismatches.size >= MISMATCHES_REMEMBERED) this.#mismatches.clear();
    this.#mismatches.add(id);
    this.#mismatchCount++;
    this.deps.log.warn(
      {
        account_id: fields.accountId,
        venue: fields.venue,
        market_id: fields.marketId,
        outcome: fields.outcome,
        crossbook_size: fields.crossbookSize / 1e6,
        venue_size: fields.venueSize / 1e6,
      },
      "live position differs from what the venue holds",
    );
  }

  async #snapshot(
    accountId: string,
    venue: VenueId,
    credential: string,
    maxAgeMs: number,
    open: () => VenueCredentials,
  ): Promise<VenueSnapshot> {
    const k = key(accountId, venue);
    const now = this.deps.clock.now();
    const entry = this.#entries.get(k);
    if (entry && entry.credential === credential) {
      if (entry.pending) return entry.pending;
      if (entry.snapshot && entry.expiresAt > now && now - entry.readAt < maxAgeMs) return entry.snapshot;
    }
    if (this.#entries.size >= SWEEP_AT) this.#sweep(now);
    const lastGood = entry?.credential === credential ? (entry.snapshot?.checkedAt ?? null) : null;
    const next: Entry = { credential, readAt: 0, expiresAt: 0, snapshot: null, pending: null };
    next.pending = this.#fetch(accountId, venue, open, lastGood).then((snapshot) => {
      next.pending = null;
      next.snapshot = snapshot;
      next.readAt = this.deps.clock.now();
      next.expiresAt =
        next.readAt +
        (snapshot.status === "ok" ? this.#maxAgeMs : Math.min(this.#maxAgeMs, FAILURE_MAX_AGE_MS));
      return snapshot;
    });
    this.#entries.set(k, next);
    return next.pending;
  }

  async #fetch(
    accountId: string,
    venueId: VenueId,
    open: () => VenueCredentials,
    lastGood: string | null,
  ): Promise<VenueSnapshot> {
    const unavailable = (reason: string): VenueSnapshot => ({
      venue: venueId,
      status: "unavailable",
      reason,
      checkedAt: lastGood,
      positions: [],
    });
    const venue = tradingVenueOf(this.deps.venues, venueId);
    if (!venue) return unavailable("disabled");
    let credentials: VenueCredentials;
    try {
      credentials = open();
    } catch (error) {
      this.deps.log.warn(
        { err: error, account_id: accountId, venue: venueId },
        "linked venue credentials could not be opened",
      );
      return unavailable("unreadable_credentials");
    }
    try {
      const positions = await venue.listPositions(credentials);
      return {
        venue: venueId,
        status: "ok",
        reason: null,
        checkedAt: isoFromMs(this.deps.clock.now()),
        positions: positions
          .filter((p) => p.size > 0)
          .map((p) => ({
            venue: venueId,
            marketId: p.marketId,
            outcome: p.outcome,
            size: p.size,
            averagePrice: p.averagePrice,
          })),
      };
    } catch (error) {
      const reason = isVenueError(error) ? error.kind : "unknown";
      this.deps.log.warn(
        { err: error, account_id: accountId, venue: venueId, kind: reason },
        "could not read the venue's positions",
      );
      return unavailable(reason);
    }
  }

  #sweep(now: number): void {
    for (const [k, entry] of this.#entries) {
      if (!entry.pending && entry.expiresAt <= now) this.#entries.delete(k);
    }
  }
}

function key(accountId: string, venue: VenueId): string {
  return `${accountId}\u0000${venue}`;
}
