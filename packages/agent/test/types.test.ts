// The named resource types are the generated API types and what the client's calls return; `tsc`
// (which type-checks this file) fails here, with a name, when one drifts from the server's document.
import { describe, expectTypeOf, it } from "vitest";
import type { paths } from "../src/generated/api";
import type {
  Account,
  AccountEvent,
  AccountStream,
  Alert,
  Arbitrage,
  ArbitrageList,
  ArbitrageOpportunity,
  Balance,
  Candle,
  Comparison,
  Crossbook,
  Event,
  Fill,
  FillPage,
  Market,
  MarketListItem,
  Match,
  Page,
  Position,
  Price,
  PriceStream,
  PriceUpdate,
  Venue,
  Webhook,
  WebhookDelivery,
} from "../src/index";

// Read straight off the generated paths (not through the client's own helpers).
type Json<P extends keyof paths, M extends "get"> = paths[P][M] extends {
  responses: { 200: { content: { "application/json": infer J } } };
}
  ? J
  : never;
type Returns<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

describe("named resource types", () => {
  it("are the generated answers of the service's operations", () => {
    // The whole market: one of the answers the document allows (all of them, while it has one).
    expectTypeOf<Market>().toMatchTypeOf<Json<"/v1/markets/{market_id}", "get">["data"]>();
    expectTypeOf<Market>().toHaveProperty("best_bid");
    expectTypeOf<Match>().toEqualTypeOf<Json<"/v1/matches/{id}", "get">["data"]>();
    expectTypeOf<Event>().toEqualTypeOf<Json<"/v1/events/{event_id}", "get">["data"]>();
    expectTypeOf<Fill>().toEqualTypeOf<Json<"/v1/orders/{id}/fills", "get">["data"][number]>();
    // The account-wide list's fills are an order's fills (one name for both).
    expectTypeOf<Fill>().toEqualTypeOf<Json<"/v1/fills", "get">["data"][number]>();
    expectTypeOf<FillPage["meta"]>().toEqualTypeOf<Json<"/v1/fills", "get">["meta"]>();
    expectTypeOf<ArbitrageOpportunity>().toEqualTypeOf<Json<"/v1/arbitrage", "get">["data"][number]>();
    expectTypeOf<ArbitrageList["meta"]>().toEqualTypeOf<Json<"/v1/arbitrage", "get">["meta"]>();
    expectTypeOf<Position>().toEqualTypeOf<Json<"/v1/positions/{id}", "get">["data"]>();
    expectTypeOf<Balance>().toEqualTypeOf<Json<"/v1/balance", "get">["data"]>();
    expectTypeOf<Comparison>().toEqualTypeOf<Json<"/v1/prices/compare", "get">["data"]>();
    expectTypeOf<Arbitrage>().toEqualTypeOf<NonNullable<Comparison["arbitrage"]>>();
    expectTypeOf<Candle>().toEqualTypeOf<Json<"/v1/prices/history", "get">["data"][number]>();
    expectTypeOf<Webhook>().toEqualTypeOf<Json<"/v1/webhooks/{id}", "get">["data"]>();
    expectTypeOf<AccountEvent>().toEqualTypeOf<Json<"/v1/account/events", "get">["data"][number]>();
    // Real shapes, not `any`: a field that does not exist is an error.
    expectTypeOf<Market>().not.toBeAny();
    expectTypeOf<Market["id"]>().toEqualTypeOf<string>();
    expectTypeOf<Arbitrage["legs"][number]["outcome"]>().toEqualTypeOf<"yes" | "no">();
  });

  it("are what the client's calls return", () => {
    expectTypeOf<Returns<Crossbook["markets"]["get"]>>().toEqualTypeOf<Market>();
    expectTypeOf<Returns<Crossbook["markets"]["list"]>>().toEqualTypeOf<Page<MarketListItem>>();
    // A listed market is a full one (unless a projection asks for less).
    expectTypeOf<Market>().toMatchTypeOf<MarketListItem>();
    expectTypeOf<Returns<Crossbook["venues"]["list"]>>().toEqualTypeOf<Venue[]>();
    expectTypeOf<Returns<Crossbook["matches"]["get"]>>().toEqualTypeOf<Match>();
    expectTypeOf<Returns<Crossbook["matches"]["list"]>>().toEqualTypeOf<Page<Match>>();
    expectTypeOf<Returns<Crossbook["events"]["get"]>>().toEqualTypeOf<Event>();
    expectTypeOf<Returns<Crossbook["events"]["list"]>>().toEqualTypeOf<Page<Event>>();
    expectTypeOf<Returns<Crossbook["orders"]["fills"]>>().toEqualTypeOf<Fill[]>();
    expectTypeOf<Returns<Crossbook["fills"]["list"]>>().toEqualTypeOf<FillPage>();
    expectTypeOf<ReturnType<Crossbook["fills"]["all"]>>().toEqualTypeOf<AsyncGenerator<Fill>>();
    expectTypeOf<Returns<Crossbook["arbitrage"]["list"]>>().toEqualTypeOf<ArbitrageList>();
    expectTypeOf<Returns<Crossbook["positions"]["get"]>>().toEqualTypeOf<Position>();
    expectTypeOf<Returns<Crossbook["positions"]["list"]>>().toEqualTypeOf<Page<Position>>();
    expectTypeOf<Returns<Crossbook["balance"]>>().toEqualTypeOf<Balance>();
    expectTypeOf<Returns<Crossbook["account"]>>().toEqualTypeOf<Account>();
    expectTypeOf<Returns<Crossbook["prices"]["get"]>>().toEqualTypeOf<Record<string, Price>>();
    expectTypeOf<Returns<Crossbook["prices"]["history"]>>().toEqualTypeOf<Page<Candle>>();
    expectTypeOf<Returns<Crossbook["prices"]["compare"]>>().toEqualTypeOf<Comparison>();
    expectTypeOf<Returns<Crossbook["alerts"]["get"]>>().toEqualTypeOf<Alert>();
    expectTypeOf<Returns<Crossbook["alerts"]["list"]>>().toEqualTypeOf<Page<Alert>>();
    expectTypeOf<Returns<Crossbook["webhooks"]["get"]>>().toEqualTypeOf<Webhook>();
    expectTypeOf<Returns<Crossbook["webhooks"]["list"]>>().toEqualTypeOf<Webhook[]>();
    expectTypeOf<Returns<Crossbook["webhooks"]["deliveries"]>>().toEqualTypeOf<WebhookDelivery[]>();
  });

  it("are what the streams hand out", () => {
    expectTypeOf<ReturnType<Crossbook["prices"]["stream"]>>().toEqualTypeOf<PriceStream>();
    expectTypeOf<PriceStream>().toMatchTypeOf<AsyncIterable<PriceUpdate>>();
    expectTypeOf<AccountStream>().toMatchTypeOf<AsyncIterable<AccountEvent>>();
    expectTypeOf<ReturnType<Crossbook["accountEvents"]>>().toEqualTypeOf<AsyncGenerator<AccountEvent>>();
  });
});
