/**
 * Table shapes as Kysely sees them. Portable across SQLite and PostgreSQL: ids and timestamps are
 * text (ISO 8601 UTC, which sorts), flags are integers 0/1, JSON is text, money is integer
 * micro-units. One exception: `events.tx_id` is PostgreSQL's transaction id (see events/outbox.ts).
 */
import type { Generated } from "kysely";

export interface AccountsTable {
  id: string;
  email: string;
  password_hash: string;
  tier: string;
  plan: string;
  /** Custom requests/minute for enterprise-tier keys; null = the configured default. */
  rate_limit_per_minute: number | null;
  /** Custom requests/minute for enterprise-plan agent keys. */
  agent_rate_limit_per_minute: number | null;
  /** Custom stream limits for the enterprise plan. */
  ws_connections: number | null;
  markets_per_subscription: number | null;
  created_at: string;
  updated_at: string;
}

export interface SessionsTable {
  id: string;
  account_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  type: string;
  /** JSON array of the permissions chosen at creation. */
  permissions: string;
  environment: string;
  /** The first characters of the secret, shown so a person can tell keys apart. */
  prefix: string;
  key_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface EventsTable {
  seq: Generated<number>;
  /** PostgreSQL: the writing transaction's id (xid8, as text); SQLite: 0. */
  tx_id: Generated<string | number>;
  id: string;
  type: string;
  account_id: string | null;
  environment: string | null;
  /** JSON text of the payload. */
  data: string;
  created_at: string;
}

export interface VenueEventsTable {
  id: string;
  venue: string;
  venue_event_id: string;
  title: string;
  category: string | null;
  /** JSON array of our market ids. */
  market_ids: string;
  close_time: string | null;
  url: string | null;
  mutually_exclusive: number;
  updated_at: string;
}

/** Prices and sizes in integer micro-units (see venues/decimal.ts). */
export interface MarketsTable {
  id: string;
  venue: string;
  venue_market_id: string;
  event_id: string | null;
  title: string;
  question: string;
  rules: string | null;
  settlement_source: string | null;
  /** JSON: { yes: {label, venueTokenId}, no: {…} } */
  outcomes: string;
  status: string;
  resolution: string | null;
  open_time: string | null;
  close_time: string | null;
  tick_size: number;
  min_size: number;
  volume: number;
  volume_24h: number;
  liquidity: number;
  url: string | null;
  last_price: number | null;
  best_bid: number | null;
  best_ask: number | null;
  neg_risk: number;
  fee_rate_bps: number | null;
  first_seen_at: string;
  status_changed_at: string;
  updated_at: string;
}

/** Price alerts. `threshold` is the value × 1,000,000: micro-units of price or micro-percent. */
export interface AlertsTable {
  id: string;
  account_id: string;
  environment: string;
  market_id: string;
  condition: string;
  threshold: number;
  repeat: number;
  /** active | triggered (a one-shot alert that fired). */
  status: string;
  armed: number;
  /** Times fired; also the fencing token of conditional updates (see alerts/service.ts). */
  trigger_count: number;
  last_triggered_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Price candles in micro-units; `start` is the period start (ISO). `first_at`/`last_at` bound the
 * updates folded in, so two partial views of one period can be told apart (see prices/candles.ts).
 */
export interface CandlesTable {
  market_id: string;
  interval: string;
  start: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  first_at: string;
  last_at: string;
}

/** How far back a market's history was fetched from its venue, per source interval. */
export interface CandleBackfillsTable {
  market_id: string;
  interval: string;
  covered_from: string;
  covered_to: string;
  fetched_at: string;
}

export interface Database {
  accounts: AccountsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  venue_events: VenueEventsTable;
  markets: MarketsTable;
  candles: CandlesTable;
  candle_backfills: CandleBackfillsTable;
  alerts: AlertsTable;
}
