/**
 * The market catalog: on start and then periodically, enumerate every open event and market of
 * each enabled venue, store them, and notice status changes (closed, resolved) as they happen.
 * A venue that is down or answers garbage is marked unhealthy and retried with backoff; the others
 * keep syncing. Health is what `GET /v1/venues` shows.
 *
 * With several instances each venue's sync is a cluster job (app.ts): one instance lists the venue
 * and writes the store, then says so on the bus (`CATALOG_SYNCED_CHANNEL`, with its health), and
 * every instance reloads what it keeps of that venue (`onChanged`). Work that changes the store
 * after a sync (`onSynced`: settlements, matching) runs on the syncing instance only.
 */
import type { Bus } from "../infra/bus/bus";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import { isVenueError } from "../venues/errors";
import type { VenueEvent, VenueId, VenueMarket } from "../venues/model";
import type { MarketDataVenue } from "../venues/venue";
import { feeColumns } from "./fees";
import * as repo from "./repo";

export type VenueHealthStatus = "pending" | "ok" | "degraded" | "unreachable";

export interface VenueHealth {
  venue: VenueId;
  status: VenueHealthStatus;
  last_sync_started_at: string | null;
  last_successful_sync_at: string | null;
  last_sync_markets: number | null;
  last_sync_duration_ms: number | null;
  feed_connected: boolean;
  /** Why the venue's live feed is not started at all (e.g. Kalshi without a feed key); else null. */
  feed_disabled_reason: string | null;
  last_error: string | null;
  last_error_at: string | null;
  consecutive_failures: number;
  next_sync_at: string | null;
}

export interface MarketStatusChange {
  market_id: string;
  venue: VenueId;
  previous: string | null;
  status: string;
  resolution: string | null;
}

/** Bus channel carrying MarketStatusChange messages (portfolio settles positions from it). */
export const MARKET_STATUS_CHANNEL = "catalog.market_status";

/** Where a venue's catalog was synced: on this instance, or on another (announced on the bus). */
export type SyncedWhere = "here" | "elsewhere";

/**
 * Bus channel on which a starting instance asks for the venues' health: each instance that syncs a
 * venue answers on CATALOG_SYNCED_CHANNEL (pub/sub keeps nothing for those who were not listening).
 */
export const CATALOG_HEALTH_REQUEST_CHANNEL = "catalog.health_request";

/** Bus channel saying a venue's catalog sync ended (by `instance`, with its health after the sync). */
export const CATALOG_SYNCED_CHANNEL = "catalog.synced";

export interface CatalogSynced {
  venue: VenueId;
  instance: string;
  health: VenueHealth;
  /** A listing was stored (false: the sync failed; only the health is news). */
  changed: boolean;
}

export interface CatalogOptions {
  /** Seconds between full syncs of a healthy venue. */
  intervalSeconds: number;
  /** Ceiling for the retry backoff of a failing venue. */
  maxBackoffSeconds?: number;
  /** Markets written per transaction. */
  batchSize?: number;
}

const iso = isoFromMs;

export function marketRow(
  market: VenueMarket,
  nowIso: string,
  previous?: { status_changed_at: string; first_seen_at: string; status: string },
): repo.MarketRow {
  return {
    id: market.id,
    venue: market.venue,
    venue_market_id: market.venueMarketId,
    event_id: market.eventId,
    title: market.title,
    question: market.question,
    rules: market.rules,
    settlement_source: market.settlementSource,
    outcomes: JSON.stringify(market.outcomes),
    status: market.status,
    resolution: market.resolution,
    open_time: market.openTime,
    close_time: market.closeTime,
    tick_size: market.tickSize,
    min_size: market.minSize,
    volume: market.volume,
    volume_24h: market.volume24h,
    liquidity: market.liquidity,
    url: market.url,
    last_price: market.lastPrice,
    best_bid: market.bestBid,
    best_ask: market.bestAsk,
    price_24h_ago: market.price24hAgo,
    neg_risk: market.negRisk ? 1 : 0,
    ...feeColumns(market.fees),
    first_seen_at: previous?.first_seen_at ?? nowIso,
    status_changed_at: previous && previous.status === market.status ? previous.status_changed_at : nowIso,
    updated_at: nowIso,
  };
}

function eventRow(event: VenueEvent, nowIso: string): repo.VenueEventRow {
  return {
    id: event.id,
    venue: event.venue,
    venue_event_id: event.venueEventId,
    title: event.title,
    category: event.category,
    market_ids: JSON.stringify(event.marketIds),
    close_time: event.closeTime,
    url: event.url,
    mutually_exclusive: event.mutuallyExclusive ? 1 : 0,
    updated_at: nowIso,
  };
}

export class CatalogService {
  readonly #health = new Map<VenueId, VenueHealth>();
  readonly #timers = new Map<VenueId, NodeJS.Timeout>();
  readonly #running = new Map<VenueId, Promise<void>>();
  readonly #syncedListeners = new Set<(venue: VenueId) => void | Promise<void>>();
  readonly #changedListeners = new Set<(venue: VenueId, where: SyncedWhere) => void | Promise<void>>();
  /** Venues whose periodic sync runs here (started, not stopped). */
  readonly #syncing = new Set<VenueId>();
  #unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: Db,
    private readonly venues: ReadonlyMap<VenueId, MarketDataVenue>,
    private readonly clock: Clock,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly options: CatalogOptions,
    /** This instance's name on the bus (its own sync announcements are not acted on twice). */
    private readonly instanceId = "local",
  ) {
    for (const id of venues.keys()) {
      this.#health.set(id, {
        venue: id,
        status: "pending",
        last_sync_started_at: null,
        last_successful_sync_at: null,
        last_sync_markets: null,
        last_sync_duration_ms: null,
        feed_connected: false,
        feed_disabled_reason: venues.get(id)?.feedUnavailable ?? null,
        last_error: null,
        last_error_at: null,
        consecutive_failures: 0,
        next_sync_at: null,
      });
    }
  }

  health(): VenueHealth[] {
    return [...this.#health.values()].map((h) => ({ ...h }));
  }

  /**
   * Called after each successful sync of a venue on THIS instance (after the `onChanged` listeners):
   * for work that writes the store once per sync (settlements, matching).
   */
  onSynced(listener: (venue: VenueId) => void | Promise<void>): void {
    this.#syncedListeners.add(listener);
  }

  /**
   * Called when a venue's catalog was synced, here or on another instance: for what every instance
   * keeps of the catalog (price summaries, the live feed's markets, cached market state).
   */
  onChanged(listener: (venue: VenueId, where: SyncedWhere) => void | Promise<void>): void {
    this.#changedListeners.add(listener);
  }

  /**
   * Follows other instances' syncs on the bus, and asks the instances syncing venues now for their
   * health (an instance that starts would otherwise show a venue as pending until its next sync).
   * Returns once subscribed.
   */
  async listen(): Promise<void> {
    if (this.#unlisten) return;
    const stopAnswering = await this.bus.subscribe(CATALOG_HEALTH_REQUEST_CHANNEL, (message) => {
      if ((message as { instance?: string }).instance === this.instanceId) return;
      for (const venue of this.#syncing) {
        const health = this.#health.get(venue);
        // Only a venue synced here at least once has health worth telling.
        if (health && health.last_sync_started_at !== null) void this.#announce(venue, health, false);
      }
    });
    const stopFollowing = await this.bus.subscribe(CATALOG_SYNCED_CHANNEL, (message) => {
      const synced = message as CatalogSynced;
      if (synced.instance === this.instanceId || !this.venues.has(synced.venue)) return;
      // Their sync, our view of the venue's health: what GET /v1/venues shows on every instance.
      const health = this.#health.get(synced.venue);
      if (health) Object.assign(health, synced.health, { feed_connected: health.feed_connected });
      if (synced.changed) void this.#tell(this.#changedListeners, synced.venue, "elsewhere");
    });
    this.#unlisten = async () => {
      await stopAnswering();
      await stopFollowing();
    };
    await this.bus
      .publish(CATALOG_HEALTH_REQUEST_CHANNEL, { instance: this.instanceId })
      .catch((error) => this.log.warn({ err: error }, "could not ask for the venues' health"));
  }

  async unlisten(): Promise<void> {
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    await unlisten?.();
  }

  setFeedConnected(venue: VenueId, connected: boolean): void {
    const health = this.#health.get(venue);
    if (health) health.feed_connected = connected;
  }

  /** Syncs one venue now and then every interval (its cluster job's start). */
  startVenue(venue: VenueId): void {
    if (!this.venues.has(venue) || this.#syncing.has(venue)) return;
    this.#syncing.add(venue);
    this.#schedule(venue, 0);
  }

  /** Stops one venue's periodic sync; resolves once a sync under way has finished. */
  async stopVenue(venue: VenueId): Promise<void> {
    this.#syncing.delete(venue);
    const timer = this.#timers.get(venue);
    if (timer) clearTimeout(timer);
    this.#timers.delete(venue);
    await this.#running.get(venue)?.catch(() => {});
  }

  #schedule(venue: VenueId, delayMs: number): void {
    if (!this.#syncing.has(venue)) return;
    const health = this.#health.get(venue)!;
    health.next_sync_at = iso(this.clock.now() + delayMs);
    const timer = setTimeout(() => {
      this.#timers.delete(venue);
      void this.syncVenue(venue).then(() => {
        const failures = this.#health.get(venue)!.consecutive_failures;
        const interval = this.options.intervalSeconds * 1000;
        const backoff = Math.min(
          (this.options.maxBackoffSeconds ?? 300) * 1000,
          5_000 * 2 ** Math.max(0, failures - 1),
        );
        this.#schedule(venue, failures === 0 ? interval : Math.min(interval, backoff));
      });
    }, delayMs);
    timer.unref();
    this.#timers.set(venue, timer);
  }

  /** Runs each listener in turn; one that fails is logged and the next still runs. */
  async #tell(
    listeners: ReadonlySet<(venue: VenueId, where: SyncedWhere) => void | Promise<void>>,
    venue: VenueId,
    where: SyncedWhere,
  ): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(venue, where);
      } catch (error) {
        this.log.warn({ err: error, venue }, "post-sync step failed");
      }
    }
  }

  /** One full sync of a venue. Never throws: failures land in the venue's health and the log. */
  async syncVenue(venueId: VenueId): Promise<void> {
    const existing = this.#running.get(venueId);
    if (existing) return existing;
    const run = this.#sync(venueId).finally(() => this.#running.delete(venueId));
    this.#running.set(venueId, run);
    return run;
  }

  async #sync(venueId: VenueId): Promise<void> {
    const venue = this.venues.get(venueId);
    const health = this.#health.get(venueId);
    if (!venue || !health) return;
    const started = this.clock.now();
    health.last_sync_started_at = iso(started);
    const progress = (what: string) => (info: { page: number; items: number }) => {
      if (info.page % 10 === 0)
        this.log.info({ venue: venueId, page: info.page, items: info.items }, `catalog sync: ${what} so far`);
    };
    try {
      this.log.info({ venue: venueId }, "catalog sync started");
      const events = venue.capabilities.supports.events
        ? await venue.listEvents({ status: "open" }, progress("events"))
        : [];
      const markets = await venue.listMarkets({ status: "open" }, progress("markets"));
      // Statuses as stored before this sync: #store compares against them, and the markets this
      // listing left out are untouched by #store, so the same map tells which ones vanished.
      const known = await repo.marketStatuses(this.db, venueId);
      const changes = await this.#store(venueId, events, markets, known);
      const closedElsewhere = await this.#refreshVanished(venue, new Set(markets.map((m) => m.id)), known);
      for (const change of [...changes, ...closedElsewhere]) {
        await this.bus
          .publish(MARKET_STATUS_CHANNEL, change)
          .catch((error) =>
            this.log.warn(
              { err: error, channel: MARKET_STATUS_CHANNEL },
              "could not publish a market status change",
            ),
          );
      }
      const duration = this.clock.now() - started;
      Object.assign(health, {
        status: "ok",
        last_successful_sync_at: isoNow(this.clock),
        last_sync_markets: markets.length,
        last_sync_duration_ms: duration,
        consecutive_failures: 0,
      } satisfies Partial<VenueHealth>);
      this.log.info(
        {
          venue: venueId,
          events: events.length,
          markets: markets.length,
          status_changes: changes.length + closedElsewhere.length,
          duration_ms: duration,
        },
        "catalog sync finished",
      );
      await this.#tell(this.#changedListeners, venueId, "here");
      await this.#tell(this.#syncedListeners, venueId, "here");
      await this.#announce(venueId, health, true);
    } catch (error) {
      health.consecutive_failures += 1;
      health.last_error = describe(error);
      health.last_error_at = isoNow(this.clock);
      health.status =
        isVenueError(error) && (error.kind === "unavailable" || error.kind === "timeout")
          ? "unreachable"
          : "degraded";
      this.log.warn(
        { err: error, venue: venueId, failures: health.consecutive_failures },
        `catalog sync failed: ${venueId} is ${health.status}; retrying with backoff`,
      );
      await this.#announce(venueId, health, false);
    }
  }

  /** Tells the other instances how the sync went (and, when it stored a listing, to reload). */
  async #announce(venue: VenueId, health: VenueHealth, changed: boolean): Promise<void> {
    const synced: CatalogSynced = { venue, instance: this.instanceId, health: { ...health }, changed };
    await this.bus
      .publish(CATALOG_SYNCED_CHANNEL, synced)
      .catch((error) =>
        this.log.warn({ err: error, channel: CATALOG_SYNCED_CHANNEL }, "could not announce a catalog sync"),
      );
  }

  /** Writes events and markets in batches; returns the status changes it saw. */
  async #store(
    venueId: VenueId,
    events: VenueEvent[],
    markets: VenueMarket[],
    known: Awaited<ReturnType<typeof repo.marketStatuses>>,
  ): Promise<MarketStatusChange[]> {
    const nowIso = isoNow(this.clock);
    const changes: MarketStatusChange[] = [];
    const batchSize = this.options.batchSize ?? 500;
    for (let i = 0; i < events.length; i += batchSize) {
      const batch = events.slice(i, i + batchSize);
      await this.db.transaction().execute(async (trx) => {
        for (const event of batch) await repo.upsertEvent(trx, eventRow(event, nowIso));
      });
    }
    for (let i = 0; i < markets.length; i += batchSize) {
      const batch = markets.slice(i, i + batchSize);
      await this.db.transaction().execute(async (trx) => {
        for (const market of batch) {
          const previous = known.get(market.id);
          await repo.upsertMarket(trx, marketRow(market, nowIso, previous));
          if (previous && (previous.status !== market.status || previous.resolution !== market.resolution)) {
            changes.push({
              market_id: market.id,
              venue: venueId,
              previous: previous.status,
              status: market.status,
              resolution: market.resolution,
            });
          }
        }
      });
    }
    return changes;
  }

  /** Markets we hold as open that the venue no longer lists as open: ask each for its status. */
  async #refreshVanished(
    venue: MarketDataVenue,
    listed: Set<string>,
    known: Awaited<ReturnType<typeof repo.marketStatuses>>,
  ): Promise<MarketStatusChange[]> {
    const vanished = [...known.entries()]
      .filter(([id, row]) => row.status === "open" && !listed.has(id))
      .map(([id]) => id);
    const changes: MarketStatusChange[] = [];
    const nowIso = isoNow(this.clock);
    const concurrency = 4;
    for (let i = 0; i < vanished.length; i += concurrency) {
      await Promise.all(
        vanished.slice(i, i + concurrency).map(async (id) => {
          const previous = known.get(id)!;
          try {
            const market = await venue.getMarket(id);
            await repo.upsertMarket(this.db, marketRow(market, nowIso, previous));
            if (market.status !== previous.status) {
              changes.push({
                market_id: id,
                venue: venue.id,
                previous: previous.status,
                status: market.status,
                resolution: market.resolution,
              });
            }
          } catch (error) {
            if (isVenueError(error) && error.kind === "not_found") {
              // Delisted: it can no longer trade.
              await repo.closeDelistedMarket(this.db, id, nowIso);
              changes.push({
                market_id: id,
                venue: venue.id,
                previous: previous.status,
                status: "closed",
                resolution: null,
              });
            } else {
              this.log.warn(
                { err: error, venue: venue.id, market_id: id },
                "could not refresh a market that left the open listing",
              );
            }
          }
        }),
      );
    }
    return changes;
  }
}

function describe(error: unknown): string {
  if (isVenueError(error)) return `${error.kind}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
