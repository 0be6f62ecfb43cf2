/**
 * Named types for the service's resources, taken from the types generated from its OpenAPI document
 * (src/generated/api.ts) rather than written out: `npm run generate -w @crossbook/agent` changes
 * them with the server, and code that relied on a removed field stops compiling. The document's
 * schemas are inline (it has no `components.schemas`), so each name is the operation it comes from;
 * a list's items are the same schema as the single resource (test/types.test.ts says so).
 */
import type { DataOf, Operation, Path, SuccessBody } from "./http.js";

/** The `data` of a path's GET answer. */
type Get<P extends Path> = DataOf<Operation<P, "get">>;
/** The `meta` of a path's GET answer. */
type MetaOf<P extends Path> = SuccessBody<Operation<P, "get">> extends { meta: infer M } ? M : never;

/** The meta of a list answer: offset pages say `total`; some lists add their own fields. */
export interface PageMeta {
  page?: number;
  limit?: number;
  total?: number;
  [key: string]: unknown;
}

/** A list answer: one page of items and its meta. @example const page: Page<Market> = await client.markets.list(); */
export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/**
 * A market in full, as `GET /v1/markets/{market_id}` answers. (Picked out by its required `id`:
 * should the document describe a partial market too, e.g. for a `fields=` projection, that one is
 * not a `Market`.)
 * @example const m: Market = await client.markets.get(id);
 */
export type Market = Extract<Get<"/v1/markets/{market_id}">, { id: string }>;

/** A market as `GET /v1/markets` lists it (today the same as {@link Market}). @example const { data }: Page<MarketListItem> = await client.markets.list(); */
export type MarketListItem = Get<"/v1/markets">[number];

/** A venue and its health (`GET /v1/venues`). @example const venues: Venue[] = await client.venues.list(); */
export type Venue = Get<"/v1/venues">[number];

/** A matched pair of markets on two venues (`GET /v1/matches/{id}`). @example const m: Match = await client.matches.get("mat_…"); */
export type Match = Get<"/v1/matches/{id}">;

/** A cross-venue event and its markets (`GET /v1/events/{event_id}`). @example const e: Event = await client.events.get("xev_…"); */
export type Event = Get<"/v1/events/{event_id}">;

/** One fill of an order, with its cause (`GET /v1/orders/{id}/fills`). @example const fills: Fill[] = await client.orders.fills("ord_…"); */
export type Fill = Get<"/v1/orders/{id}/fills">[number];

/**
 * The cursor of `GET /v1/fills`: `next_after` (pass it back as `after`: the last fill's id, or the
 * `after` you gave when none came; null before any fill) and `has_more` (more fills match now).
 * @example const { meta }: FillPage = await client.fills.list(); if (meta.has_more) …
 */
export type FillPageMeta = MetaOf<"/v1/fills">;

/**
 * A page of your fills across orders (`GET /v1/fills`), oldest first. Its items are {@link Fill}s
 * (the same schema as an order's fills; test/types.test.ts says so).
 * @example const page: FillPage = await client.fills.list({ since: "2026-11-01T00:00:00Z" });
 */
export interface FillPage {
  data: Fill[];
  meta: FillPageMeta;
}

/**
 * One cross-venue arbitrage opportunity of `GET /v1/arbitrage`: the event, the pair's two markets,
 * the legs to buy, and the figures at its most profitable `size` (`profit`, `avg_edge`, `cost`, `fees`).
 * @example const best: ArbitrageOpportunity | undefined = (await client.arbitrage.list({ min_profit: 1 })).data[0];
 */
export type ArbitrageOpportunity = Get<"/v1/arbitrage">[number];

/**
 * What a scan of `GET /v1/arbitrage` covered: `pairs` considered, `priced` (both books live),
 * `unpriced`, `total` passing the filters before `limit`, the `min_size` used and `pairs_loaded_at`.
 * @example const { meta }: ArbitrageList = await client.arbitrage.list(); console.log(meta.priced, "/", meta.pairs);
 */
export type ArbitrageMeta = MetaOf<"/v1/arbitrage">;

/**
 * The answer of `GET /v1/arbitrage`: opportunities, best (highest profit) first, and the scan's meta.
 * @example const { data, meta }: ArbitrageList = await client.arbitrage.list({ venue: "kalshi" });
 */
export interface ArbitrageList {
  data: ArbitrageOpportunity[];
  meta: ArbitrageMeta;
}

/** A position with its PnL (`GET /v1/positions/{id}`). @example const p: Position = await client.positions.get("pos_…"); */
export type Position = Get<"/v1/positions/{id}">;

/** The key's environment's balance (`GET /v1/balance`). @example const b: Balance = await client.balance(); */
export type Balance = Get<"/v1/balance">;

/** One market's current price, book optional (a value of `GET /v1/prices`). @example const p: Price | undefined = (await client.prices.get([id]))[id]; */
export type Price = Get<"/v1/prices">[string];

/** One candle of `GET /v1/prices/history`. @example const { data }: Page<Candle> = await client.prices.history({ market_id: id, interval: "1h" }); */
export type Candle = Get<"/v1/prices/history">[number];

/** A cross-venue comparison with its arbitrage analysis (`GET /v1/prices/compare`). @example const c: Comparison = await client.prices.compare("xev_…"); */
export type Comparison = Get<"/v1/prices/compare">;

/** A comparison's arbitrage between the pair's two markets (null in a comparison when there is none). @example const a: Arbitrage | null = (await client.prices.compare("xev_…")).arbitrage; */
export type Arbitrage = NonNullable<Comparison["arbitrage"]>;

/** A server-side price alert (`GET /v1/alerts/{id}`). @example const a: Alert = await client.alerts.get("alt_…"); */
export type Alert = Get<"/v1/alerts/{id}">;

/** A webhook, without its secret (`GET /v1/webhooks/{id}`). @example const w: Webhook = await client.webhooks.get("wh_…"); */
export type Webhook = Get<"/v1/webhooks/{id}">;

/** One delivery attempt of a webhook (`GET /v1/webhooks/{id}/deliveries`). @example const d: WebhookDelivery[] = await client.webhooks.deliveries("wh_…"); */
export type WebhookDelivery = Get<"/v1/webhooks/{id}/deliveries">[number];

/** The key's account, the key itself and its limits (`GET /v1/account`). @example const me: Account = await client.account(); */
export type Account = Get<"/v1/account">;

/** One event of your account, as `GET /v1/account/events` lists it and the account stream pushes it. @example for await (const e of client.accountEvents()) e satisfies AccountEvent; */
export type AccountEvent = Get<"/v1/account/events">[number];
