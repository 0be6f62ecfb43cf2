/**
 * Operators' decisions on pairs: verify (optionally correcting relation and polarity), reject with a
 * reason, or pair two markets by hand. Matches are shared by every account, so only an operator
 * reaches this (routes.ts). A decision marks the pair curated: the runner never changes its status,
 * relation or polarity again. Each decision regroups the events it touches and announces a newly
 * verified pair in its own transaction, so readers never see one without the other.
 */
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db, DbOrTrx, Dialect } from "../infra/db/store";
import { newId } from "../infra/ids";
import { type AnnounceDeps, recordMatched } from "./announce";
import { regroup } from "./events";
import {
  canonicalPair,
  defaultPolarity,
  isEdge,
  type MatchRow,
  polarityProblem,
  type RejectReason,
} from "./pairs";
import { type MatchDetail, matchDetails, matchNotFound } from "./reads";
import * as repo from "./repo";
import type { Polarity, Relation } from "./types";

/** Who made a person's decision on a pair: recorded with it (`decided_by_account`, `decided_by_key`). */
export interface Curator {
  accountId: string;
  /** The operator's API key; null for a decision made signed in to the console, where no key is used. */
  keyId: string | null;
}

export interface VerifyInput {
  relation?: Relation | undefined;
  polarity?: Polarity | undefined;
  note?: string | undefined;
}

export interface RejectInput {
  reason: RejectReason;
  note?: string | undefined;
}

export interface CreateInput {
  market_ids: string[];
  relation: Relation;
  polarity?: Polarity | undefined;
  note?: string | undefined;
}

export interface CurationDeps extends AnnounceDeps {
  db: Db;
  dialect: Dialect;
  clock: Clock;
}

/**
 * The columns that record an operator's decision on a pair: its status (with the rejection reason and
 * the operator's note), who decided (`decided_by: "admin"`, their account and key) and when, and
 * `curated`, which keeps the runner from changing the pair's status, relation or polarity again.
 */
function adminDecision(
  curator: Curator,
  now: string,
  decision: { status: "verified" | "rejected"; reason?: RejectReason; note?: string | undefined },
) {
  return {
    status: decision.status,
    status_reason: decision.reason ?? null,
    status_note: decision.note ?? null,
    decided_by: "admin",
    decided_by_account: curator.accountId,
    decided_by_key: curator.keyId,
    decided_at: now,
    curated: 1,
  };
}

export class Curation {
  constructor(private readonly deps: CurationDeps) {}

  /**
   * An operator verifies a pair, optionally correcting its relation and polarity (read as "market_a is
   * <relation> of market_b"). Allowed from any status; it overwrites the previous decision.
   */
  async verify(id: string, input: VerifyInput, curator: Curator): Promise<MatchDetail> {
    return this.#write(async (trx, nowMs) => {
      const row = await repo.findMatch(trx, id);
      if (!row) throw matchNotFound(id);
      await this.#decideVerified(trx, row, input, curator, nowMs);
      return (await repo.findMatch(trx, id))!;
    });
  }

  /** An operator rejects a pair with a reason code; allowed from any status (it overwrites). */
  async reject(id: string, input: RejectInput, curator: Curator): Promise<MatchDetail> {
    return this.#write(async (trx, nowMs) => {
      const row = await repo.findMatch(trx, id);
      if (!row) throw matchNotFound(id);
      const now = isoFromMs(nowMs);
      await repo.updateMatch(trx, id, {
        ...adminDecision(curator, now, { status: "rejected", reason: input.reason, note: input.note }),
        event_id: null,
        updated_at: now,
      });
      if (isEdge(row)) await regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
      return (await repo.findMatch(trx, id))!;
    });
  }

  /**
   * An operator pairs two markets by hand: verified and curated. `relation` reads "first is <relation>
   * of second". A pair that already exists is verified with this relation instead (created false).
   */
  async create(input: CreateInput, curator: Curator): Promise<{ match: MatchDetail; created: boolean }> {
    const [first, second] = input.market_ids;
    if (input.market_ids.length !== 2 || first === undefined || second === undefined) {
      throw validationError({ "body.market_ids": "must name exactly two markets" });
    }
    if (first === second) throw validationError({ "body.market_ids": "must name two different markets" });
    let created = false;
    const match = await this.#write(async (trx, nowMs) => {
      const infos = await repo.marketInfos(trx, [first, second]);
      for (const id of [first, second]) {
        if (!infos.has(id)) throw new AppError("MARKET_NOT_FOUND", `No market ${id}`, { market_id: id });
      }
      const one = infos.get(first)!;
      const other = infos.get(second)!;
      if (one.venue === other.venue) {
        throw validationError({
          "body.market_ids": `must be on two different venues (both are on ${one.venue})`,
        });
      }
      const pair = canonicalPair(one, other, input.relation);
      const polarity = input.polarity ?? defaultPolarity(input.relation);
      const problem = polarityProblem(pair.relation, polarity);
      if (problem) throw validationError({ "body.polarity": problem });
      const existing = await repo.findPair(trx, pair.a, pair.b);
      if (existing) {
        await this.#decideVerified(
          trx,
          existing,
          { relation: pair.relation, polarity, note: input.note },
          curator,
          nowMs,
        );
        return (await repo.findMatch(trx, existing.id))!;
      }
      const now = isoFromMs(nowMs);
      const row = {
        id: newId("mat", nowMs),
        market_a: pair.a,
        market_b: pair.b,
        venue_a: pair.venueA,
        venue_b: pair.venueB,
        relation: pair.relation,
        polarity,
        matcher_relation: null,
        matcher_polarity: null,
        confidence: 1,
        reasons: JSON.stringify(["Paired by an admin"]),
        caveats: "[]",
        blockers: "[]",
        ...adminDecision(curator, now, { status: "verified", note: input.note }),
        event_id: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertMatch(trx, row);
      if (isEdge(row)) await regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
      await recordMatched(this.deps, trx, [row.id]);
      created = true;
      return (await repo.findMatch(trx, row.id))!;
    });
    return { match, created };
  }

  async #decideVerified(
    trx: DbOrTrx,
    row: MatchRow,
    input: VerifyInput,
    curator: Curator,
    nowMs: number,
  ): Promise<void> {
    const relation = input.relation ?? (row.relation as Relation);
    const polarity =
      input.polarity ??
      (input.relation !== undefined ? defaultPolarity(relation) : (row.polarity as Polarity));
    const problem = polarityProblem(relation, polarity);
    if (problem) throw validationError({ "body.polarity": problem });
    const now = isoFromMs(nowMs);
    const after = { relation, status: "verified" };
    await repo.updateMatch(trx, row.id, {
      relation,
      polarity,
      ...adminDecision(curator, now, { status: "verified", note: input.note }),
      ...(isEdge(after) ? {} : { event_id: null }),
      updated_at: now,
    });
    if (isEdge(row) !== isEdge(after)) {
      await regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
    }
    if (row.status !== "verified") await recordMatched(this.deps, trx, [row.id]);
  }

  /** One decision in one locked transaction, answered with the pair as that transaction left it. */
  async #write(work: (trx: DbOrTrx, nowMs: number) => Promise<MatchRow>): Promise<MatchDetail> {
    const nowMs = this.deps.clock.now();
    return repo.underMatchesLock(this.deps.db, this.deps.dialect, async (trx) => {
      const row = await work(trx, nowMs);
      return (await matchDetails(trx, [row]))[0]!;
    });
  }
}
