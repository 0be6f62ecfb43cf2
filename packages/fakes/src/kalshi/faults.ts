/**
 * Scripted failure modes on the REST side (issue 3 part 5): outage (503), rate limiting (429 with
 * `Retry-After`), latency, and response tampering (unknown fields, missing fields, unknown enum
 * values, garbage JSON). Also the per-endpoint request counter tests use to prove a code path never
 * reached, say, order entry.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Ctx, errorBody, type Faults, type MalformKind, pathOf } from "./context";

export function newFaults(): Faults {
  return {
    down: false,
    rateLimit: { remaining: 0, retryAfterSeconds: 1 },
    latencyMs: 0,
    unexpectedFields: false,
    malform: [],
    skipSeq: new Set(),
    counts: new Map(),
  };
}

/** Fields a "missing_fields" response loses wherever they appear. */
const DROPPED = new Set([
  "yes_bid_dollars",
  "yes_ask_dollars",
  "last_price_dollars",
  "close_time",
  "no_dollars",
  "fill_count_fp",
  "balance_dollars",
  "yes_price_dollars",
  "cursor",
]);

function walk(value: unknown, fn: (obj: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) for (const v of value) walk(v, fn);
  else if (value && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    for (const v of Object.values(obj)) walk(v, fn);
    fn(obj);
  }
}

export function tamper(body: string, kind: MalformKind): string {
  if (kind === "garbage") return `${body.slice(0, Math.max(1, Math.floor(body.length / 2)))}<html>502`;
  const data: unknown = JSON.parse(body);
  walk(data, (obj) => {
    if (kind === "unexpected_fields") {
      obj["x_fake_unknown"] = { nested: [1, "two"] };
      obj["x_fake_flag"] = true;
    } else if (kind === "missing_fields") {
      for (const k of Object.keys(obj)) if (DROPPED.has(k)) delete obj[k];
    } else if (kind === "unknown_enum") {
      for (const k of ["status", "side", "book_side", "outcome_side", "market_type"])
        if (typeof obj[k] === "string") obj[k] = `x_unknown_${k}`;
    }
  });
  return JSON.stringify(data);
}

/** The counter key: `METHOD /route/pattern` relative to the API base. */
export function routeKey(ctx: Ctx, req: FastifyRequest): string {
  const pattern = req.routeOptions.url ?? pathOf(req);
  return `${req.method} ${pattern.startsWith(ctx.base) ? pattern.slice(ctx.base.length) || "/" : pattern}`;
}

export function installFaults(app: FastifyInstance, ctx: Ctx): void {
  const f = ctx.faults;
  app.addHook("onRequest", async (req: FastifyRequest, reply: FastifyReply) => {
    const key = routeKey(ctx, req);
    f.counts.set(key, (f.counts.get(key) ?? 0) + 1);
    if (f.latencyMs > 0) await new Promise((r) => setTimeout(r, f.latencyMs));
    if (f.down) {
      reply.code(503).send(errorBody("service_unavailable", "service temporarily unavailable"));
      return reply;
    }
    if (f.rateLimit.remaining > 0) {
      f.rateLimit.remaining -= 1;
      reply
        .code(429)
        .header("Retry-After", String(f.rateLimit.retryAfterSeconds))
        .send(errorBody("too_many_requests", "too many requests"));
      return reply;
    }
  });
  app.addHook("onSend", async (req, reply, payload) => {
    if (typeof payload !== "string" || reply.statusCode >= 300) return payload;
    if (!String(reply.getHeader("content-type") ?? "").includes("json")) return payload;
    let out = payload;
    if (f.unexpectedFields) out = tamper(out, "unexpected_fields");
    const path = pathOf(req);
    const i = f.malform.findIndex((m) => m.path === null || path.includes(m.path));
    if (i >= 0) {
      const m = f.malform[i]!;
      m.remaining -= 1;
      if (m.remaining <= 0) f.malform.splice(i, 1);
      out = tamper(out, m.kind);
    }
    return out;
  });
}
