/**
 * The portfolio as a user reads it: positions marked to the current quote (a NO position at
 * 1 − the YES price, never at the YES price) and the balance of the key's environment.
 */
import { AppError } from "../http/errors";
import type { Db } from "../infra/db/store";
import type { Owner } from "../orders/repo";
import type { SandboxAccounts } from "../sandbox/service";
import { MICROS } from "../venues/decimal";
import {
  costBasisTotal,
  findBalance,
  findPosition,
  listPositions,
  type PositionFilter,
  type PositionRow,
} from "./repo";

/** The current YES price of a market in micro-units, or null when nothing is known. */
export type YesMark = (marketId: string) => number | null;

export interface MarkedPosition {
  row: PositionRow;
  /** Mark of the position's own outcome (NO = 1 − YES), micro-units; null without a quote. */
  mark: number | null;
  marketValue: number | null;
  unrealizedPnl: number | null;
}

export interface BalanceView {
  environment: Owner["environment"];
  currency: string;
  available: number;
  locked: number;
  positionsCost: number;
  total: number;
  deposits: number;
  withdrawals: number;
  fees: number;
  realizedPnl: number;
  updatedAt: string | null;
}

/** Live cash as the venues report it (orders/live.ts): live money is not in the `balances` table. */
export type LiveBalance = (owner: Owner) => Promise<{ available: number; locked: number }>;

export class PortfolioService {
  #liveBalance: LiveBalance | undefined;

  constructor(
    private readonly db: Db,
    private readonly sandbox: SandboxAccounts,
    private readonly yesMark: YesMark,
  ) {}

  setLiveBalance(liveBalance: LiveBalance): void {
    this.#liveBalance = liveBalance;
  }

  mark(row: PositionRow): MarkedPosition {
    if (row.status === "resolved" || row.size === 0) {
      return {
        row,
        mark: null,
        marketValue: row.status === "resolved" ? 0 : null,
        unrealizedPnl: row.size === 0 ? 0 : null,
      };
    }
    const yes = this.yesMark(row.market_id);
    if (yes === null) return { row, mark: null, marketValue: null, unrealizedPnl: null };
    const mark = row.outcome === "no" ? MICROS - yes : yes;
    const marketValue = Math.round((mark * row.size) / MICROS);
    return { row, mark, marketValue, unrealizedPnl: marketValue - row.cost_basis };
  }

  async list(owner: Owner, filter: PositionFilter, page: { limit: number; offset: number }) {
    const { rows, total } = await listPositions(this.db, owner, filter, page);
    return { positions: rows.map((row) => this.mark(row)), total };
  }

  async get(owner: Owner, id: string): Promise<MarkedPosition> {
    const row = await findPosition(this.db, owner, id);
    if (!row) throw new AppError("POSITION_NOT_FOUND", `No position ${id}`, { position_id: id });
    return this.mark(row);
  }

  /**
   * The environment's cash: available, locked in open buy orders, and the positions at cost, whose
   * sum is `total`. A sandbox account is funded on first read.
   */
  async balance(owner: Owner): Promise<BalanceView> {
    await this.sandbox.ensureFunded(owner);
    const [row, positionsCost, live] = await Promise.all([
      findBalance(this.db, owner),
      costBasisTotal(this.db, owner),
      owner.environment === "live" && this.#liveBalance ? this.#liveBalance(owner) : undefined,
    ]);
    const available = live?.available ?? row?.available ?? 0;
    const locked = live?.locked ?? row?.locked ?? 0;
    return {
      environment: owner.environment,
      currency: owner.environment === "sandbox" ? "USDC (sandbox)" : "USD",
      available,
      locked,
      positionsCost,
      total: available + locked + positionsCost,
      deposits: row?.deposits ?? 0,
      withdrawals: row?.withdrawals ?? 0,
      fees: row?.fees ?? 0,
      realizedPnl: row?.realized_pnl ?? 0,
      updatedAt: row?.updated_at ?? null,
    };
  }
}
