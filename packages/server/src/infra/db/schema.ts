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
  /** 1: may curate global data (matches); set only with `crossbook accounts update --operator`. */
  operator: Generated<number>;
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
  /** The client address and User-Agent that signed in (shown when listing sign-ins). */
  ip: string | null;
  user_agent: string | null;
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
  /** YES price 24 h before the listing as the venue states it, micro-units; null when it gives none. Migration 017. */
  price_24h_ago: number | null;
  neg_risk: number;
  /**
   * The fee schedule (migration 014, see @crossbook/fees): C × fee_rate × (P(1 − P))^fee_exponent
   * for takers (fee_maker_rate for makers), rounded by `fee_model`'s rules (polymarket | kalshi);
   * Polymarket's cap in bps, Kalshi's series fee type and multiplier. All null: not known yet.
   */
  fee_model: string | null;
  fee_rate: number | null;
  fee_exponent: number | null;
  fee_maker_rate: number | null;
  fee_cap_bps: number | null;
  fee_type: string | null;
  fee_multiplier: number | null;
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

/**
 * A range of venue history fetched for a market and source interval, [covered_from, covered_to)
 * (whether or not the venue had data in it). `resolution_minutes`: the spacing the venue served when
 * coarser than the interval (Polymarket's closed markets), else null. Migration 017.
 */
export interface CandleBackfillRangesTable {
  market_id: string;
  interval: string;
  covered_from: string;
  covered_to: string;
  resolution_minutes: number | null;
  fetched_at: string;
}

/** Orders (orders/). Prices and sizes in micro-units; `price` is the limit (or, for a market order, the worst price accepted). */
export interface OrdersTable {
  id: string;
  account_id: string;
  environment: string;
  market_id: string;
  venue: string;
  side: string;
  outcome: string;
  type: string;
  time_in_force: string;
  price: number;
  max_slippage_ppm: number | null;
  amount: number;
  filled_amount: number;
  /** Σ fill price × size, micro-USD: the average fill price is filled_notional / filled_amount. */
  filled_notional: number;
  fees: number;
  /** Collateral still locked for the unfilled rest (buy orders), micro-USD. */
  locked: number;
  /** Sandbox: real volume queued ahead at the order's price when it came to rest. */
  queue_ahead: number;
  status: string;
  cancel_reason: string | null;
  client_order_id: string | null;
  venue_order_id: string | null;
  position_id: string;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  cancelled_at: string | null;
  /** Kalshi's per-order fee accumulator: rounding overpaid and not yet rebated, micro-USD (migration 014). */
  fee_carry: number;
  /** The amount asked for, when the venue's precision made crossbook place less (`amount`); else null. */
  requested_amount: number | null;
  /** Why `amount` differs from `requested_amount`, for the user; else null. */
  amount_note: string | null;
}

export interface FillsTable {
  id: string;
  order_id: string;
  account_id: string;
  environment: string;
  market_id: string;
  outcome: string;
  side: string;
  price: number;
  size: number;
  fee: number;
  /** taker (walked the book) or maker (a real trade reached a resting order). */
  liquidity: string;
  /** JSON: what caused the fill. */
  cause: string;
  cause_key: string;
  created_at: string;
}

export interface PositionsTable {
  id: string;
  account_id: string;
  environment: string;
  market_id: string;
  outcome: string;
  size: number;
  /** Contracts promised to open sell orders. */
  reserved: number;
  cost_basis: number;
  realized_pnl: number;
  fees: number;
  /** open | closed | resolved */
  status: string;
  resolution: string | null;
  payout: number | null;
  redeemable: number;
  /**
   * Live only: contracts in `size` taken over from the venue's holding (bought outside crossbook),
   * whose cost is unknown; `cost_basis` covers the rest. Migration 015.
   */
  unknown_cost_size: number;
  opened_at: string;
  updated_at: string;
  closed_at: string | null;
  resolved_at: string | null;
}

export interface BalancesTable {
  account_id: string;
  environment: string;
  available: number;
  locked: number;
  deposits: number;
  withdrawals: number;
  fees: number;
  realized_pnl: number;
  updated_at: string;
}

export interface TransfersTable {
  id: string;
  account_id: string;
  environment: string;
  /** initial | deposit | withdrawal | reset */
  kind: string;
  amount: number;
  balance_after: number;
  created_at: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  environment: string;
  key: string;
  request_hash: string;
  status_code: number;
  /** The JSON body first returned. */
  response: string;
  created_at: string;
  expires_at: string;
}

/**
 * Linked venue accounts (credentials/), one per account and venue. Public fields are in clear;
 * `sealed_secret` is the SecretBox-sealed JSON of the secret ones, bound to `id`.
 */
export interface VenueCredentialsTable {
  id: string;
  account_id: string;
  venue: string;
  label: string | null;
  /** Polymarket: the signer address derived from the private key. */
  address: string | null;
  /** Kalshi: the API key id. */
  key_id: string | null;
  funder: string | null;
  signature_type: number | null;
  has_api_credentials: number;
  sealed_secret: string;
  created_at: string;
  updated_at: string;
}

/** Webhook registrations (webhooks/). `events` is a JSON array; the secret is sealed (SecretBox). */
export interface WebhooksTable {
  id: string;
  account_id: string;
  environment: string;
  url: string;
  events: string;
  secret_sealed: string;
  /** active | failed */
  status: string;
  failed_at: string | null;
  created_at: string;
  updated_at: string;
  /** The dispatcher that owns this webhook's queue, and until when (migration 008). */
  lease_owner: string | null;
  lease_until: string | null;
}

/** One event to one webhook; the same `id` on every attempt (receivers deduplicate on it). */
export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  /** pending | success | failed */
  status: string;
  attempts: number;
  round_attempts: number;
  next_attempt_at: string;
  last_response_code: number | null;
  last_response_time_ms: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  webhook_id: string;
  event_type: string;
  attempt: number;
  /** success | failed */
  status: string;
  response_code: number | null;
  response_time_ms: number;
  error: string | null;
  created_at: string;
  /** JSON object of the request headers this attempt sent (migration 020; null before it). */
  request_headers: string | null;
  /** The body sent, for attempts without a delivery row (tests); otherwise the delivery's body. */
  request_body: string | null;
}

/** How far a consumer of the outbox has read (webhooks fan-out). */
export interface OutboxCursorsTable {
  name: string;
  tx: string;
  seq: number;
  updated_at: string;
}

/**
 * Matched markets (matching/), in canonical order: `market_a` is on the venue first in VENUE_IDS
 * (same venue: the lower id), and `relation` reads "market_a is <relation> of market_b".
 */
export interface MatchesTable {
  id: string;
  market_a: string;
  market_b: string;
  venue_a: string;
  venue_b: string;
  /** identity | complement | subset | superset | overlap | disjoint: the one in force. */
  relation: string;
  /** same | inverted */
  polarity: string;
  /** The matcher's latest relation and polarity (differ from the above when an admin overrode them). */
  matcher_relation: string | null;
  matcher_polarity: string | null;
  confidence: number;
  /** JSON arrays of sentences. */
  reasons: string;
  blockers: string;
  /** JSON array: edge-clause differences (migration 018). */
  caveats: Generated<string>;
  /** candidate | verified | rejected */
  status: string;
  /** The reason code of a rejection. */
  status_reason: string | null;
  /** The admin's note on the last decision. */
  status_note: string | null;
  /** matcher | admin | null (an undecided candidate) */
  decided_by: string | null;
  /** The account and API key behind a person's decision (null for the matcher's). */
  decided_by_account: string | null;
  decided_by_key: string | null;
  decided_at: string | null;
  /** 1: an admin decided or created it; the matcher never changes its status (or relation) again. */
  curated: number;
  /** The cross-venue event (`xev_…`) of a non-rejected identity or complement pair; else null. */
  event_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Requests per API key and minute (migration 019): admitted, and refused with 429. */
/** Who runs each cluster-wide job (cluster/leases.ts); read and written on PostgreSQL only. */
export interface JobLeasesTable {
  job: string;
  holder: string;
  /** Grows each time the lease changes hands (a bigint: text on PostgreSQL). */
  token: number | string;
  expires_at: Date | string;
  acquired_at: Date | string;
}

export interface KeyUsageTable {
  key_id: string;
  /** Whole minutes since the Unix epoch (the rate limiter's windows). */
  minute: number;
  requests: number;
  limited: number;
}

export interface Database {
  accounts: AccountsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  venue_events: VenueEventsTable;
  markets: MarketsTable;
  candles: CandlesTable;
  candle_backfill_ranges: CandleBackfillRangesTable;
  alerts: AlertsTable;
  orders: OrdersTable;
  fills: FillsTable;
  positions: PositionsTable;
  balances: BalancesTable;
  transfers: TransfersTable;
  idempotency_keys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  outbox_cursors: OutboxCursorsTable;
  venue_credentials: VenueCredentialsTable;
  matches: MatchesTable;
  key_usage: KeyUsageTable;
  job_leases: JobLeasesTable;
}
