/**
 * Risk limits: the plain-data configuration of a risk chain, written in code or in a JSON file,
 * and its validation (every problem reported with the field it is about).
 */
import { readFile } from "node:fs/promises";

/**
 * The limits a {@link createRiskChain | risk chain} enforces. Every field is optional: a limit
 * that is absent (or `null` in JSON) is not checked, so `{}` checks nothing but the intent's
 * shape, the kill switch and custom checks. Money amounts are in the account's currency, prices
 * in outcome terms (0 to 1). Every limit is inclusive: a value equal to it is allowed.
 *
 * @example
 * const config: RiskConfig = {
 *   maxPositionPerMarket: { contracts: 1_000, notional: 500 },
 *   maxTotalExposure: 5_000,
 *   maxOrderNotional: 250,
 *   maxDailyLoss: 200,
 *   maxOpenOrders: 20,
 *   priceBand: { maxDistance: 0.1, maxSlippage: 0.05 },
 *   circuitBreaker: { maxConsecutiveErrors: 5, cooldownMs: 30_000 },
 * };
 */
export interface RiskConfig {
  /**
   * The position in one market after the order, over both outcomes: `contracts` caps Σ |size|,
   * `notional` caps Σ |size| × mark (the current mid of the outcome, else the position's
   * current price, average price, or 1). Set either or both. Orders that reduce a position pass.
   */
  maxPositionPerMarket?: { contracts?: number; notional?: number };
  /**
   * Σ |notional| of every position + the open orders' notional + this order's notional.
   * Orders that reduce a position pass.
   */
  maxTotalExposure?: number;
  /** amount × the order's price (see {@link RiskContext.orderPrice}), for every order. */
  maxOrderNotional?: number;
  /**
   * Once the day's loss (−(realized today + unrealized)) exceeds it, orders that add risk are
   * rejected; orders that reduce a position still pass.
   */
  maxDailyLoss?: number;
  /**
   * Open (resting) orders after this one. Orders that cannot rest (market orders, IOC, FOK) do not
   * add to the count and pass.
   */
  maxOpenOrders?: number;
  /**
   * The price band around the outcome's current mid. `maxDistance` (price units, e.g. 0.05):
   * a limit price, or the worst fill a market order's slippage allows, may be at most this far from
   * the mid. `maxSlippage` (a fraction, like the order's `max_slippage`): caps a market order's
   * slippage (the server's default of 0.05 when the order gives none). `allowWithoutQuote`
   * (default false): what happens when the market has no mid to measure against.
   */
  priceBand?: { maxDistance?: number; maxSlippage?: number; allowWithoutQuote?: boolean };
  /**
   * Opens after `maxConsecutiveErrors` (default 5) errors reported with `recordError` in a row,
   * rejects every order for `cooldownMs` (default 30 000), then half-opens: orders pass again,
   * the next success closes it, the next error reopens it for another cool-down.
   */
  circuitBreaker?: { maxConsecutiveErrors?: number; cooldownMs?: number };
}

/**
 * Defaults of the optional settings inside a configured check, and the server's default market
 * order slippage (used when an intent gives none).
 *
 * @example
 * const cooldown = config.circuitBreaker?.cooldownMs ?? RISK_DEFAULTS.circuitBreaker.cooldownMs;
 */
export const RISK_DEFAULTS = Object.freeze({
  circuitBreaker: Object.freeze({ maxConsecutiveErrors: 5, cooldownMs: 30_000 }),
  priceBand: Object.freeze({ allowWithoutQuote: false }),
  /** The server's `max_slippage` for market orders that give none (orders/service.ts). */
  marketOrderSlippage: 0.05,
});

/**
 * One problem with a risk configuration: the field (dotted path, `(root)` for the whole
 * document, `(file)` for reading and parsing) and what is wrong with it.
 *
 * @example
 * const issue: RiskConfigIssue = { path: "maxDailyLoss", message: "must be a number ≥ 0, got -5" };
 */
export interface RiskConfigIssue {
  path: string;
  message: string;
}

/**
 * Thrown for an invalid risk configuration; `issues` lists every problem found, and the message
 * has one line per issue.
 *
 * @example
 * try { await loadRiskConfig("risk.json"); }
 * catch (e) { if (e instanceof RiskConfigError) for (const i of e.issues) console.error(i.path, i.message); }
 */
export class RiskConfigError extends Error {
  override readonly name = "RiskConfigError";
  readonly issues: readonly RiskConfigIssue[];
  readonly source: string | undefined;

  constructor(issues: readonly RiskConfigIssue[], source?: string) {
    const where = source ? ` in ${source}` : "";
    super(`Invalid risk config${where}:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join("\n")}`);
    this.issues = issues;
    this.source = source;
  }
}

type FieldKind =
  | { kind: "number"; min: number; max?: number; integer?: boolean; minLabel?: string }
  | { kind: "boolean" };

interface GroupSpec {
  fields: Record<string, FieldKind>;
  /** At least one of the fields must be set. */
  needsOne?: boolean;
}

const LIMIT: FieldKind = { kind: "number", min: 0 };
const COUNT: FieldKind = { kind: "number", min: 0, integer: true };
const FRACTION: FieldKind = { kind: "number", min: 0, max: 1 };

const TOP: Record<string, FieldKind | GroupSpec> = {
  maxPositionPerMarket: { fields: { contracts: LIMIT, notional: LIMIT }, needsOne: true },
  maxTotalExposure: LIMIT,
  maxOrderNotional: LIMIT,
  maxDailyLoss: LIMIT,
  maxOpenOrders: COUNT,
  priceBand: {
    fields: { maxDistance: FRACTION, maxSlippage: FRACTION, allowWithoutQuote: { kind: "boolean" } },
    needsOne: true,
  },
  circuitBreaker: {
    fields: { maxConsecutiveErrors: { kind: "number", min: 1, integer: true }, cooldownMs: LIMIT },
  },
};

function isGroup(spec: FieldKind | GroupSpec): spec is GroupSpec {
  return "fields" in spec;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "object") return "an object";
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkField(path: string, value: unknown, spec: FieldKind, issues: RiskConfigIssue[]): boolean {
  if (spec.kind === "boolean") {
    if (typeof value === "boolean") return true;
    issues.push({ path, message: `must be true or false, got ${describe(value)}` });
    return false;
  }
  const range = spec.max === undefined ? `≥ ${spec.min}` : `between ${spec.min} and ${spec.max}`;
  const what = spec.integer ? `an integer ${range}` : `a number ${range}`;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    issues.push({ path, message: `must be ${what}, got ${describe(value)}` });
    return false;
  }
  if (spec.integer && !Number.isInteger(value)) {
    issues.push({ path, message: `must be ${what}, got ${value}` });
    return false;
  }
  if (value < spec.min) {
    const sign = spec.min === 0 ? "must not be negative" : `must be ${what}`;
    issues.push({ path, message: `${sign}, got ${value}` });
    return false;
  }
  if (spec.max !== undefined && value > spec.max) {
    issues.push({ path, message: `must be ${what}, got ${value}` });
    return false;
  }
  return true;
}

function unknownKey(path: string, key: string, known: string[]): RiskConfigIssue {
  return { path, message: `unknown key "${key}" (known: ${known.join(", ")})` };
}

/**
 * Validates a risk configuration given as data (the parsed JSON file, or an object written in
 * code) and returns it without `null` fields. Throws a {@link RiskConfigError} listing every
 * problem: unknown keys, wrong types, negative or out-of-range limits, empty check objects.
 *
 * @example
 * const config = parseRiskConfig(JSON.parse(text), "risk.json");
 */
export function parseRiskConfig(value: unknown, source?: string): RiskConfig {
  const issues: RiskConfigIssue[] = [];
  if (!isPlainObject(value)) {
    throw new RiskConfigError(
      [{ path: "(root)", message: `must be an object, got ${describe(value)}` }],
      source,
    );
  }
  const out: Record<string, unknown> = {};
  const topKeys = Object.keys(TOP);
  for (const [key, raw] of Object.entries(value)) {
    const spec = TOP[key];
    if (spec === undefined) {
      issues.push(unknownKey(key, key, topKeys));
      continue;
    }
    if (raw === null || raw === undefined) continue;
    if (!isGroup(spec)) {
      if (checkField(key, raw, spec, issues)) out[key] = raw;
      continue;
    }
    if (!isPlainObject(raw)) {
      issues.push({ path: key, message: `must be an object, got ${describe(raw)}` });
      continue;
    }
    const group: Record<string, unknown> = {};
    const known = Object.keys(spec.fields);
    let ok = true;
    for (const [sub, subRaw] of Object.entries(raw)) {
      const subSpec = spec.fields[sub];
      const path = `${key}.${sub}`;
      if (subSpec === undefined) {
        issues.push(unknownKey(path, sub, known));
        ok = false;
        continue;
      }
      if (subRaw === null || subRaw === undefined) continue;
      if (checkField(path, subRaw, subSpec, issues)) group[sub] = subRaw;
      else ok = false;
    }
    if (ok && spec.needsOne && !known.some((k) => k !== "allowWithoutQuote" && group[k] !== undefined)) {
      const limits = known.filter((k) => k !== "allowWithoutQuote");
      issues.push({ path: key, message: `set ${limits.join(" and/or ")} (or leave ${key} out)` });
      continue;
    }
    out[key] = group;
  }
  if (issues.length > 0) throw new RiskConfigError(issues, source);
  return out as RiskConfig;
}

/**
 * Reads a risk configuration from a JSON file (the shape of {@link RiskConfig}) and validates it
 * with {@link parseRiskConfig}. A missing file or invalid JSON is a {@link RiskConfigError} too.
 *
 * @example
 * // risk.json: { "maxOrderNotional": 250, "maxDailyLoss": 200, "circuitBreaker": { "maxConsecutiveErrors": 3 } }
 * const chain = createRiskChain(await loadRiskConfig("risk.json"), { state, cancelAll });
 */
export async function loadRiskConfig(path: string): Promise<RiskConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = code === "ENOENT" ? "file not found" : `cannot be read (${(error as Error).message})`;
    throw new RiskConfigError([{ path: "(file)", message }], path);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new RiskConfigError(
      [{ path: "(file)", message: `not valid JSON: ${(error as Error).message}` }],
      path,
    );
  }
  return parseRiskConfig(data, path);
}
