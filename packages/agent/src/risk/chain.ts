/**
 * The risk chain: the kill switch, the circuit breaker, the built-in checks a {@link RiskConfig}
 * turns on, and custom checks, run in that order for every order intent.
 */
import {
  BUILTIN_CHECKS,
  builtinChecks,
  createRiskContext,
  intentProblems,
  isCheckResult,
  normalizeIntent,
} from "./checks.js";
import { parseRiskConfig, RISK_DEFAULTS, type RiskConfig } from "./config.js";
import type { OrderIntent, RiskCheck, RiskDecision, RiskState } from "./types.js";

/**
 * What a chain needs from outside: the state it reads, how to cancel every open order (for the
 * kill switch), a clock (for the circuit breaker's cool-down), and custom checks to start with.
 *
 * @example
 * const deps: RiskChainDeps<{ cancelled_count: number }> = {
 *   state,
 *   cancelAll: () => client.orders.cancelAll(),
 *   now: () => fakeNow,
 * };
 */
export interface RiskChainDeps<TCancelled = unknown> {
  state: RiskState;
  /** Cancels every open order and returns what it cancelled; called by {@link RiskChain.kill}. */
  cancelAll?: () => Promise<TCancelled>;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /** Custom checks, run after the built-in ones (as if added with {@link RiskChain.use}). */
  checks?: readonly RiskCheck[];
}

/**
 * The state of the circuit breaker: `closed` (orders pass), `open` (every order is rejected until
 * `halfOpensAt`), `half_open` (orders pass; the next success closes it, the next error reopens it).
 *
 * @example
 * const state: BreakerState = chain.status().breaker.state;
 */
export type BreakerState = "closed" | "open" | "half_open";

/**
 * A snapshot of the chain for dashboards and logs.
 *
 * @example
 * const { killed, breaker } = chain.status();
 * if (breaker.state === "open") console.log(`trading resumes at ${new Date(breaker.halfOpensAt!)}`);
 */
export interface RiskStatus {
  killed: boolean;
  killReason: string | null;
  /** When the kill switch was engaged (ms since the epoch). */
  killedAt: number | null;
  breaker: {
    /** False when the config has no `circuitBreaker` (errors are still counted). */
    enabled: boolean;
    state: BreakerState;
    consecutiveErrors: number;
    /** The message of the last error recorded. */
    lastError: string | null;
    openedAt: number | null;
    /** When an open breaker half-opens. */
    halfOpensAt: number | null;
  };
  /** Names of the checks run for every intent, in order. */
  checks: string[];
}

/**
 * A pre-trade risk chain. Every intent passes the kill switch, the circuit breaker, the intent's
 * own shape, the configured limits and the custom checks, in that order; the first rejection is
 * the answer. A check that throws (or a state read that fails) rejects the order: the chain fails
 * closed.
 *
 * @example
 * const chain = createRiskChain({ maxOrderNotional: 250 }, { state, cancelAll: () => client.orders.cancelAll() });
 * const decision = await chain.check({ market_id: id, side: "buy", price: 0.4, amount: 100 });
 * if (decision.allowed) await client.orders.place(intent);
 */
export interface RiskChain<TCancelled = unknown> {
  /** The validated configuration. */
  readonly config: Readonly<RiskConfig>;
  /**
   * Runs the chain for an intent.
   * @example const d = await chain.check(intent); if (!d.allowed) console.warn(d.check, d.reason);
   */
  check(intent: OrderIntent): Promise<RiskDecision>;
  /**
   * Runs the chain and throws a {@link RiskRejectedError} when the intent is rejected.
   * @example await chain.enforce(intent); await client.orders.place(intent);
   */
  enforce(intent: OrderIntent): Promise<void>;
  /**
   * Adds a custom check at the end of the chain. Throws when its name is taken (built-in names
   * are reserved).
   * @example chain.use({ name: "kalshi_only", check: (i) => i.market_id.startsWith("kalshi:") ? allow() : reject("kalshi only") });
   */
  use(check: RiskCheck): this;
  /**
   * Engages the kill switch: from now on every intent is rejected, then every open order is
   * cancelled through the injected `cancelAll`, whose result is returned (undefined without one).
   * If `cancelAll` throws, the switch stays engaged and the error propagates.
   * @example const cancelled = await chain.kill("daily loss limit hit manually");
   */
  kill(reason: string): Promise<TCancelled | undefined>;
  /**
   * Releases the kill switch.
   * @example chain.resume();
   */
  resume(): void;
  /**
   * Reports a failed request (an order rejected by the server, a network error). After
   * `circuitBreaker.maxConsecutiveErrors` in a row the breaker opens; in half-open one error
   * reopens it.
   * @example try { await client.orders.place(intent); chain.recordSuccess(); } catch (e) { chain.recordError(e); }
   */
  recordError(error: unknown): void;
  /**
   * Reports a successful request: resets the error count and closes a half-open breaker (an open
   * breaker still waits out its cool-down).
   * @example chain.recordSuccess();
   */
  recordSuccess(): void;
  /**
   * The kill switch, the breaker and the active checks.
   * @example console.log(chain.status().breaker.state);
   */
  status(): RiskStatus;
}

/**
 * Thrown by {@link RiskChain.enforce} for a rejected intent; carries the decision.
 *
 * @example
 * try { await chain.enforce(intent); } catch (e) { if (e instanceof RiskRejectedError) console.warn(e.check, e.details); }
 */
export class RiskRejectedError extends Error {
  override readonly name = "RiskRejectedError";
  readonly check: string;
  readonly reason: string;
  readonly details: Record<string, unknown>;
  readonly intent: OrderIntent;

  constructor(decision: Extract<RiskDecision, { allowed: false }>, intent: OrderIntent) {
    super(`Order rejected by the ${decision.check} risk check: ${decision.reason}`);
    this.check = decision.check;
    this.reason = decision.reason;
    this.details = decision.details;
    this.intent = intent;
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : String(error);
}

type Rejection = Extract<RiskDecision, { allowed: false }>;

class Chain<TCancelled> implements RiskChain<TCancelled> {
  readonly config: Readonly<RiskConfig>;
  readonly #state: RiskState;
  readonly #cancelAll: (() => Promise<TCancelled>) | undefined;
  readonly #now: () => number;
  readonly #builtin: RiskCheck[];
  readonly #custom: RiskCheck[] = [];
  readonly #breaker: { maxConsecutiveErrors: number; cooldownMs: number } | undefined;

  #kill: { reason: string; at: number } | null = null;
  #errors = 0;
  #lastError: string | null = null;
  #openedAt: number | null = null;
  #halfOpen = false;

  constructor(config: RiskConfig, deps: RiskChainDeps<TCancelled>) {
    this.config = Object.freeze(parseRiskConfig(config));
    const state = deps?.state;
    for (const method of ["positions", "realizedPnlToday", "openOrders", "quote"] as const) {
      if (typeof state?.[method] !== "function") {
        throw new TypeError(`createRiskChain: deps.state.${method} must be a function`);
      }
    }
    this.#state = state;
    this.#cancelAll = deps.cancelAll;
    this.#now = deps.now ?? Date.now;
    this.#builtin = builtinChecks(this.config);
    const breaker = this.config.circuitBreaker;
    this.#breaker = breaker && {
      maxConsecutiveErrors: breaker.maxConsecutiveErrors ?? RISK_DEFAULTS.circuitBreaker.maxConsecutiveErrors,
      cooldownMs: breaker.cooldownMs ?? RISK_DEFAULTS.circuitBreaker.cooldownMs,
    };
    for (const check of deps.checks ?? []) this.use(check);
  }

  use(check: RiskCheck): this {
    if (typeof check?.name !== "string" || check.name.length === 0 || typeof check.check !== "function") {
      throw new TypeError("chain.use: a check needs a non-empty name and a check function");
    }
    if ((BUILTIN_CHECKS as readonly string[]).includes(check.name)) {
      throw new Error(`chain.use: "${check.name}" is the name of a built-in check`);
    }
    if (this.#custom.some((c) => c.name === check.name)) {
      throw new Error(`chain.use: a check named "${check.name}" is already in the chain`);
    }
    this.#custom.push(check);
    return this;
  }

  /** The breaker's state now, moving open → half_open once the cool-down is over. */
  #breakerState(now: number): BreakerState {
    if (this.#openedAt !== null && this.#breaker) {
      if (now < this.#openedAt + this.#breaker.cooldownMs) return "open";
      this.#openedAt = null;
      this.#halfOpen = true;
    }
    return this.#halfOpen ? "half_open" : "closed";
  }

  /** The kill switch and the breaker: rejections that need no state. */
  #gate(): Rejection | null {
    if (this.#kill) {
      return {
        allowed: false,
        check: "kill_switch",
        reason: `The kill switch is engaged: ${this.#kill.reason}`,
        details: { reason: this.#kill.reason, killedAt: this.#kill.at },
      };
    }
    const now = this.#now();
    if (this.#breakerState(now) === "open" && this.#breaker && this.#openedAt !== null) {
      const halfOpensAt = this.#openedAt + this.#breaker.cooldownMs;
      return {
        allowed: false,
        check: "circuit_breaker",
        reason:
          `The circuit breaker is open after ${this.#errors} consecutive errors` +
          `${this.#lastError ? ` (last: ${this.#lastError})` : ""}; orders resume in ${Math.ceil((halfOpensAt - now) / 1000)} s`,
        details: {
          consecutiveErrors: this.#errors,
          lastError: this.#lastError,
          openedAt: this.#openedAt,
          halfOpensAt,
        },
      };
    }
    return null;
  }

  async check(intent: OrderIntent): Promise<RiskDecision> {
    const gate = this.#gate();
    if (gate) return gate;
    const problems = intentProblems(intent);
    if (problems.length > 0) {
      return {
        allowed: false,
        check: "intent",
        reason: `The order intent is invalid: ${problems.join("; ")}`,
        details: { problems },
      };
    }
    const normalized = normalizeIntent(intent);
    const ctx = createRiskContext(normalized, this.#state, this.#now());
    for (const check of [...this.#builtin, ...this.#custom]) {
      let result: unknown;
      try {
        result = await check.check(normalized, ctx);
      } catch (error) {
        return {
          allowed: false,
          check: check.name,
          reason: `The ${check.name} check could not run: ${errorMessage(error)}`,
          details: { error: errorMessage(error) },
        };
      }
      if (!isCheckResult(result)) {
        return {
          allowed: false,
          check: check.name,
          reason: `The ${check.name} check returned no valid result`,
          details: { result },
        };
      }
      if (!result.allowed) {
        return { allowed: false, check: check.name, reason: result.reason, details: result.details ?? {} };
      }
    }
    // The kill switch may have been engaged (or the breaker opened) while the state was read.
    return this.#gate() ?? { allowed: true };
  }

  async enforce(intent: OrderIntent): Promise<void> {
    const decision = await this.check(intent);
    if (!decision.allowed) throw new RiskRejectedError(decision, intent);
  }

  async kill(reason: string): Promise<TCancelled | undefined> {
    this.#kill = { reason: String(reason), at: this.#now() };
    if (!this.#cancelAll) return undefined;
    return await this.#cancelAll();
  }

  resume(): void {
    this.#kill = null;
  }

  recordError(error: unknown): void {
    this.#errors += 1;
    this.#lastError = errorMessage(error);
    if (!this.#breaker) return;
    const now = this.#now();
    const state = this.#breakerState(now);
    if (state === "open") return;
    if (state === "half_open" || this.#errors >= this.#breaker.maxConsecutiveErrors) {
      this.#openedAt = now;
      this.#halfOpen = false;
    }
  }

  recordSuccess(): void {
    const state = this.#breakerState(this.#now());
    this.#errors = 0;
    if (state === "half_open") this.#halfOpen = false;
  }

  status(): RiskStatus {
    const state = this.#breakerState(this.#now());
    const openedAt = state === "open" ? this.#openedAt : null;
    return {
      killed: this.#kill !== null,
      killReason: this.#kill?.reason ?? null,
      killedAt: this.#kill?.at ?? null,
      breaker: {
        enabled: this.#breaker !== undefined,
        state,
        consecutiveErrors: this.#errors,
        lastError: this.#lastError,
        openedAt,
        halfOpensAt: openedAt !== null && this.#breaker ? openedAt + this.#breaker.cooldownMs : null,
      },
      checks: [
        "kill_switch",
        ...(this.#breaker ? ["circuit_breaker"] : []),
        "intent",
        ...this.#builtin.map((c) => c.name),
        ...this.#custom.map((c) => c.name),
      ],
    };
  }
}

/**
 * Builds a risk chain from limits (in code, or from {@link loadRiskConfig}) and the state it reads.
 * The config is validated like a JSON file (a {@link RiskConfigError} for bad values).
 *
 * @example
 * const chain = createRiskChain(
 *   { maxPositionPerMarket: { contracts: 500 }, maxDailyLoss: 200, circuitBreaker: { maxConsecutiveErrors: 3 } },
 *   { state, cancelAll: () => client.orders.cancelAll() },
 * );
 * await chain.enforce({ market_id: "kalshi:X", side: "buy", price: 0.42, amount: 100 });
 */
export function createRiskChain<TCancelled = unknown>(
  config: RiskConfig,
  deps: RiskChainDeps<TCancelled>,
): RiskChain<TCancelled> {
  return new Chain(config, deps);
}
