/**
 * Accounts and sign-in. An account has an email, a scrypt password hash, a tier (request rates and
 * key caps) and an agent plan (agent-key rates and stream limits). Signing in returns a session
 * token (`cbs_…`, stored hashed) that expires; it is only good for managing API keys.
 */

import { PLANS, type Plan, TIERS, type Tier } from "../access/limits";
import type { Config } from "../config";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import {
  dummyPasswordHash,
  HashLimiter,
  HashQueueFull,
  hashPassword,
  sha256Hex,
  verifyPassword,
} from "../infra/hashing";
import { newId, randomToken } from "../infra/ids";
import * as repo from "./repo";

export interface Account {
  id: string;
  email: string;
  tier: Tier;
  plan: Plan;
  rate_limit_per_minute: number | null;
  agent_rate_limit_per_minute: number | null;
  ws_connections: number | null;
  markets_per_subscription: number | null;
  /** May curate global data (matches). Only the CLI sets it (`accounts update --operator`). */
  operator: boolean;
  created_at: string;
}

export interface Session {
  id: string;
  account_id: string;
  expires_at: string;
}

/** Where a sign-in came from, kept with its session so the user can recognise it. */
export interface SignInClient {
  ip: string;
  userAgent: string | undefined;
}

/** A live sign-in as the user sees it in their list. */
export interface SessionSummary {
  id: string;
  created_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

export const SESSION_TOKEN_PREFIX = "cbs_";
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 10;

export function toAccount(row: repo.AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    tier: row.tier as Tier,
    plan: row.plan as Plan,
    rate_limit_per_minute: row.rate_limit_per_minute,
    agent_rate_limit_per_minute: row.agent_rate_limit_per_minute,
    ws_connections: row.ws_connections,
    markets_per_subscription: row.markets_per_subscription,
    operator: row.operator === 1,
    created_at: row.created_at,
  };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface CreateAccountInput {
  email: string;
  password: string;
  tier?: Tier;
  plan?: Plan;
}

/** Sign-ins that may wait for a hashing slot, per allowed concurrent hash; more are refused. */
const HASH_QUEUE_PER_SLOT = 16;

export class AccountsService {
  readonly #hashing: HashLimiter;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: Config,
  ) {
    const slots = config.passwordHashConcurrency;
    this.#hashing = new HashLimiter(slots, slots * HASH_QUEUE_PER_SLOT);
  }

  /** Runs a password hash within the concurrency cap; a full queue is 503 SERVER_BUSY. */
  async #hash<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.#hashing.run(work);
    } catch (error) {
      if (error instanceof HashQueueFull) {
        throw new AppError(
          "SERVER_BUSY",
          "Too many sign-ins are being checked right now; retry in a moment",
        ).withHeaders({
          "Retry-After": "1",
        });
      }
      throw error;
    }
  }

  async create(input: CreateAccountInput): Promise<Account> {
    const email = normalizeEmail(input.email);
    const problems: Record<string, string> = {};
    if (!EMAIL.test(email)) problems["email"] = "must be an email address";
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      problems["password"] = `must be at least ${MIN_PASSWORD_LENGTH} characters`;
    }
    if (input.tier && !TIERS.includes(input.tier)) problems["tier"] = `must be one of: ${TIERS.join(", ")}`;
    if (input.plan && !PLANS.includes(input.plan)) problems["plan"] = `must be one of: ${PLANS.join(", ")}`;
    if (Object.keys(problems).length > 0) throw validationError(problems);

    const now = isoNow(this.clock);
    const row = {
      id: newId("acc", this.clock.now()),
      email,
      password_hash: await this.#hash(() => hashPassword(input.password, this.config.passwordHashCost)),
      tier: input.tier ?? "free",
      plan: input.plan ?? "standard",
      rate_limit_per_minute: null,
      agent_rate_limit_per_minute: null,
      ws_connections: null,
      markets_per_subscription: null,
      operator: 0,
      created_at: now,
      updated_at: now,
    };
    if (await repo.findAccountByEmail(this.db, email)) throw new AppError("EMAIL_TAKEN");
    try {
      await repo.insertAccount(this.db, row);
    } catch (error) {
      // Lost a race with another sign-up for the same email: the unique index decided.
      if (await repo.findAccountByEmail(this.db, email)) throw new AppError("EMAIL_TAKEN");
      throw error;
    }
    return toAccount(row);
  }

  async get(id: string): Promise<Account | undefined> {
    const row = await repo.findAccountById(this.db, id);
    return row ? toAccount(row) : undefined;
  }

  async getByEmail(email: string): Promise<Account | undefined> {
    const row = await repo.findAccountByEmail(this.db, normalizeEmail(email));
    return row ? toAccount(row) : undefined;
  }

  async update(
    id: string,
    changes: Partial<
      Pick<
        Account,
        | "tier"
        | "plan"
        | "rate_limit_per_minute"
        | "agent_rate_limit_per_minute"
        | "ws_connections"
        | "markets_per_subscription"
        | "operator"
      >
    >,
  ): Promise<Account> {
    const { operator, ...rest } = changes;
    await repo.updateAccount(this.db, id, {
      ...rest,
      ...(operator === undefined ? {} : { operator: operator ? 1 : 0 }),
      updated_at: isoNow(this.clock),
    });
    const account = await this.get(id);
    if (!account) throw new AppError("ACCOUNT_NOT_FOUND");
    return account;
  }

  /** Checks the password and opens a session. The same error (and similar time) for any failure. */
  async login(
    emailInput: string,
    password: string,
    client?: SignInClient,
  ): Promise<{ account: Account; token: string; session: Session }> {
    const row = await repo.findAccountByEmail(this.db, normalizeEmail(emailInput));
    const stored = row?.password_hash ?? (await dummyPasswordHash(this.config.passwordHashCost));
    const valid = await this.#hash(() => verifyPassword(password, stored));
    if (!row || !valid) throw new AppError("UNAUTHORIZED", "Invalid email or password");
    const { token, session } = await this.openSession(row.id, client);
    return { account: toAccount(row), token, session };
  }

  async openSession(accountId: string, client?: SignInClient): Promise<{ token: string; session: Session }> {
    const now = this.clock.now();
    const token = SESSION_TOKEN_PREFIX + randomToken(32);
    const session = {
      id: newId("ses", now),
      account_id: accountId,
      expires_at: new Date(now + this.config.sessionTtlSeconds * 1000).toISOString(),
    };
    await repo.insertSession(this.db, {
      ...session,
      token_hash: sha256Hex(token),
      created_at: new Date(now).toISOString(),
      revoked_at: null,
      ip: client?.ip ?? null,
      // Whatever the client sent, kept short: it is shown back, never parsed.
      user_agent: client?.userAgent?.slice(0, 256) ?? null,
    });
    return { token, session };
  }

  /** The live session for a token, or undefined if unknown, revoked or expired. */
  async resolveSession(token: string): Promise<Session | undefined> {
    const row = await repo.findSessionByHash(this.db, sha256Hex(token));
    if (!row || row.revoked_at !== null) return undefined;
    if (Date.parse(row.expires_at) <= this.clock.now()) return undefined;
    return { id: row.id, account_id: row.account_id, expires_at: row.expires_at };
  }

  /** Deletes sessions that expired more than a day ago; returns how many. */
  async deleteExpiredSessions(): Promise<number> {
    return repo.deleteExpiredSessions(this.db, new Date(this.clock.now() - 86_400_000).toISOString());
  }

  async logout(sessionId: string): Promise<void> {
    await repo.revokeSession(this.db, sessionId, isoNow(this.clock));
  }

  /** The account's live sign-ins, newest first. */
  async listSessions(accountId: string): Promise<SessionSummary[]> {
    const rows = await repo.listActiveSessions(this.db, accountId, isoNow(this.clock));
    return rows.map((r) => ({
      id: r.id,
      created_at: r.created_at,
      expires_at: r.expires_at,
      ip: r.ip,
      user_agent: r.user_agent,
    }));
  }

  /** Signs the account out everywhere (but `keep`, when given); returns how many sessions ended. */
  async revokeAllSessions(accountId: string, keep?: string): Promise<number> {
    return repo.revokeAccountSessions(this.db, accountId, isoNow(this.clock), keep);
  }
}
