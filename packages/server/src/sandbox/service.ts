/**
 * Sandbox money: every sandbox account starts with 10,000 fake USDC the first time it trades or
 * asks for its balance; it can deposit, withdraw and reset. Only sandbox keys reach this (the
 * routes refuse live keys), and sandbox balances are a separate ledger row from anything live.
 */
import type { Outbox } from "../events/outbox";
import { AppError } from "../http/errors";
import { type Clock, isoNow } from "../infra/clock";
import type { Db, DbOrTrx } from "../infra/db/store";
import { newId } from "../infra/ids";
import type { Owner } from "../ledger/orders-repo";
import { openOrdersOfOwner } from "../ledger/orders-repo";
import {
  adjustBalance,
  type BalanceRow,
  createBalance,
  findBalance,
  insertTransfer,
  wipeOwner,
} from "../ledger/positions-repo";
import { MICROS } from "../venues/decimal";
import type { SandboxExchange } from "./exchange";

export const SANDBOX_STARTING_BALANCE = 10_000 * MICROS;
/** A single deposit may not exceed this (keeps totals far from float limits). */
export const MAX_TRANSFER = 1_000_000_000 * MICROS;

export class SandboxAccounts {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    private readonly exchange: SandboxExchange,
    private readonly clock: Clock,
  ) {}

  /** Accounts known to have a sandbox balance row (it is never deleted, only reset). */
  readonly #funded = new Set<string>();

  /** Creates the sandbox balance with its 10,000 USDC on first use; a no-op afterwards. */
  async ensureFunded(owner: Owner, db: DbOrTrx = this.db): Promise<void> {
    if (owner.environment !== "sandbox" || this.#funded.has(owner.accountId)) return;
    if (await findBalance(db, owner)) {
      this.#funded.add(owner.accountId);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      const nowIso = isoNow(this.clock);
      if (!(await createBalance(trx, owner, SANDBOX_STARTING_BALANCE, nowIso))) return;
      await this.#recordTransfer(
        trx,
        owner,
        "initial",
        SANDBOX_STARTING_BALANCE,
        SANDBOX_STARTING_BALANCE,
        nowIso,
      );
    });
  }

  async deposit(owner: Owner, amount: number): Promise<{ transferId: string; balance: BalanceRow }> {
    this.#check(owner, amount);
    await this.ensureFunded(owner);
    return this.db.transaction().execute(async (trx) => {
      const nowIso = isoNow(this.clock);
      await adjustBalance(trx, owner, { available: amount, deposits: amount }, nowIso);
      const balance = (await findBalance(trx, owner))!;
      const transferId = await this.#recordTransfer(trx, owner, "deposit", amount, balance.available, nowIso);
      return { transferId, balance };
    });
  }

  async withdraw(owner: Owner, amount: number): Promise<{ transferId: string; balance: BalanceRow }> {
    this.#check(owner, amount);
    await this.ensureFunded(owner);
    return this.db.transaction().execute(async (trx) => {
      const nowIso = isoNow(this.clock);
      const ok = await adjustBalance(trx, owner, { available: -amount, withdrawals: amount }, nowIso, amount);
      if (!ok) {
        const balance = await findBalance(trx, owner);
        throw new AppError("INSUFFICIENT_BALANCE", "Not enough available balance to withdraw that much", {
          requested: amount / MICROS,
          available: (balance?.available ?? 0) / MICROS,
        });
      }
      const balance = (await findBalance(trx, owner))!;
      const transferId = await this.#recordTransfer(
        trx,
        owner,
        "withdrawal",
        amount,
        balance.available,
        nowIso,
      );
      return { transferId, balance };
    });
  }

  /**
   * Back to a fresh account: open orders leave the simulated book, and orders, fills, positions,
   * transfers and idempotency keys are deleted; the balance is 10,000 USDC again. No events are sent
   * for what a reset wipes.
   */
  async reset(owner: Owner): Promise<BalanceRow> {
    this.#sandboxOnly(owner);
    const open = await openOrdersOfOwner(this.db, owner);
    const balance = await this.db.transaction().execute(async (trx) => {
      await wipeOwner(trx, owner);
      const nowIso = isoNow(this.clock);
      await createBalance(trx, owner, SANDBOX_STARTING_BALANCE, nowIso);
      await insertTransfer(trx, {
        id: newId("trf"),
        owner,
        kind: "reset",
        amount: SANDBOX_STARTING_BALANCE,
        balanceAfter: SANDBOX_STARTING_BALANCE,
        nowIso,
      });
      return (await findBalance(trx, owner))!;
    });
    for (const order of open) this.exchange.forget(order.id, order.market_id);
    return balance;
  }

  async #recordTransfer(
    trx: DbOrTrx,
    owner: Owner,
    kind: "initial" | "deposit" | "withdrawal",
    amount: number,
    balanceAfter: number,
    nowIso: string,
  ): Promise<string> {
    const id = newId("trf");
    await insertTransfer(trx, { id, owner, kind, amount, balanceAfter, nowIso });
    await this.outbox.record(trx, {
      type: kind === "withdrawal" ? "withdrawal.completed" : "deposit.completed",
      data: {
        transfer_id: id,
        amount: amount / MICROS,
        currency: "USDC",
        balance: balanceAfter / MICROS,
        environment: owner.environment,
        completed_at: nowIso,
      },
      accountId: owner.accountId,
      environment: owner.environment,
    });
    return id;
  }

  #sandboxOnly(owner: Owner): void {
    if (owner.environment !== "sandbox") throw new AppError("SANDBOX_ONLY");
  }

  #check(owner: Owner, amount: number): void {
    this.#sandboxOnly(owner);
    if (!Number.isSafeInteger(amount) || amount <= 0 || amount > MAX_TRANSFER)
      throw new AppError("VALIDATION_ERROR", "amount must be a positive number of USDC up to 1,000,000,000", {
        fields: { "body.amount": "must be > 0 and at most 1,000,000,000, with at most 6 decimals" },
      });
  }
}
