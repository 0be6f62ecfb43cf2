/**
 * Arbitrage between two markets that settle on the same event, from real book depth and after each
 * venue's fees. Pure: books and fee models in, numbers out (integer micro-units, exact).
 *
 * A hedged pair is one contract bought on each market such that exactly one of the two pays $1
 * whatever happens:
 * - identity (A's YES is B's YES): YES on A + NO on B, or NO on A + YES on B;
 * - complement (A's YES is B's NO): YES on A + YES on B, or NO on A + NO on B.
 * Subset, superset, overlap and disjoint pairs have outcomes where both legs lose (or where the
 * relation itself is uncertain): they are not arbitrage and get no figure.
 *
 * Cost of S pairs = what S contracts cost on each leg's asks (cheapest first) + each venue's taker
 * fee. Assumption, the same the sandbox makes when it fills an order against a book: each leg is one
 * taker order sweeping the levels, and each level it takes from is one fill charged its own fee by
 * the market's schedule (@crossbook/fees `fillFee`: Polymarket's shares × rate × (P(1 − P))^exponent
 * rounded down to $0.00001; Kalshi's trade fee rounded up to $0.0001 and the balance change to the
 * cent, with the order's fee accumulator running through the leg's fills). Sizes are whole
 * multiples of `lot` (one contract by default: Kalshi trades whole contracts), and never more than
 * both legs can fill: no position without its hedge.
 *
 * The best size is the S that maximises profit(S) = S × $1 − cost(S) − fees(S) over every lot
 * multiple up to the hedgeable depth (the largest such S on ties); it is computed again over sizes
 * from `minSize` up, which is what a caller judges an opportunity on. Between two book
 * breakpoints both legs stay on one level each, so profit is linear in S up to the rounding of
 * notional and fees (under two cents a pair): only the few sizes near the segment's better end
 * can beat that end, and only those are evaluated exactly. Every segment is visited, so the answer
 * is the exact maximum, not a heuristic.
 */
import { fillFee } from "@crossbook/fees";
import { type FeeModel, notional, takerFee } from "../ledger/money";
import { MICROS, type Micros } from "../venues/decimal";
import type { BookLevel, OrderBook, Outcome, VenueId } from "../venues/model";

/** The relation vocabulary of matching (src/matching/types.ts), as far as arbitrage cares. */
export type PairRelation = "identity" | "complement" | "subset" | "superset" | "overlap" | "disjoint";
export type PairPolarity = "same" | "inverted";

export interface ArbitrageMarket {
  marketId: string;
  venue: VenueId;
  book: OrderBook;
  fees: FeeModel;
}

export interface ArbitrageInput {
  /** Market A and market B: the relation reads "A is <relation> of B". */
  a: ArbitrageMarket;
  b: ArbitrageMarket;
  relation: PairRelation;
  /** When given, it must agree with the relation (identity: same, complement: inverted). */
  polarity?: PairPolarity;
  /** Sizes are multiples of this, micro-contracts. Default one contract. */
  lot?: Micros;
  /** Smallest size `bestFromMin` may be, micro-contracts (rounded up to a lot). Default one lot. */
  minSize?: Micros;
  /** Rows of the per-level breakdown. Default 5. */
  maxRows?: number;
}

export interface LegRef {
  marketId: string;
  venue: VenueId;
  outcome: Outcome;
}

export interface LegCost {
  /** What the contracts cost at the book's prices (price × size per fill). */
  cost: Micros;
  fees: Micros;
  /** cost / size, micro-USD per contract. */
  averagePrice: Micros;
}

/** The economics of one size. Every amount in micro-USD; sizes in micro-contracts. */
export interface SizeResult {
  size: Micros;
  /** Both legs' cost before fees. */
  cost: Micros;
  fees: Micros;
  /** What the pairs pay at settlement: $1 each. */
  payout: Micros;
  /** payout − cost − fees. */
  profit: Micros;
  legs: [LegCost, LegCost];
}

/** One stretch of the walk where both legs stay on one book level each. */
export interface DepthRow {
  /** Ask price of leg 1 and leg 2 on this stretch. */
  prices: [Micros, Micros];
  /** Pairs taken on this stretch, and in total up to its end. */
  size: Micros;
  cumulativeSize: Micros;
  /** $1 − both prices: the margin of one pair before fees. */
  grossEdge: Micros;
  /** Fees the stretch adds, and what it adds to profit after them. */
  fees: Micros;
  profit: Micros;
  /** Profit of the whole walk up to the stretch's end. */
  cumulativeProfit: Micros;
}

export interface DirectionResult {
  /** The two legs to buy: leg 1 on market A, leg 2 on market B. */
  legs: [LegRef, LegRef];
  /** Pairs both books can fill, in whole lots. */
  depth: Micros;
  /** One lot: its profit is the edge of the first contract after fees. Null when depth < one lot. */
  first: SizeResult | null;
  /** The profit-maximising size (largest on ties), whatever its sign. Null when depth < one lot. */
  best: SizeResult | null;
  /** The same over sizes ≥ minSize: what an opportunity is judged on. Null when depth < minSize. */
  bestFromMin: SizeResult | null;
  rows: DepthRow[];
  /** True when the walk had more stretches than `maxRows`. */
  moreRows: boolean;
}

export type ArbitrageResult =
  | {
      arbitrageable: true;
      relation: "identity" | "complement";
      minSize: Micros;
      lot: Micros;
      /** Both directions, the better one first (higher best profit, then higher first-lot profit). */
      directions: [DirectionResult, DirectionResult];
    }
  | {
      arbitrageable: false;
      reason: "relation_not_arbitrageable" | "polarity_mismatch";
      message: string;
    };

/** A leg's asks as a cost curve: cumulative size, notional and fees before each level. */
interface Curve {
  prices: Micros[];
  /** start[i] = contracts on the levels before i; start[n] = the whole depth. */
  start: Micros[];
  notional: Micros[];
  fees: Micros[];
  /** Kalshi's fee accumulator of the leg's order when it reaches level i (0 elsewhere). */
  carry: Micros[];
  /** Fee per micro-contract at each level, as the fee function charges a very large fill. */
  feeRate: number[];
  model: FeeModel;
}

/** Size used to read a fee function's linear rate: its rounding is then negligible. */
const RATE_PROBE = 1e15;
/**
 * Most a leg's exact cost of one fill can differ from its linear estimate: notional rounds to the
 * micro-dollar (±0.5); Kalshi's trade fee rounds up by under $0.0001 and the balance change by under
 * a cent, and a rebate takes back a cent — with room to spare.
 */
const LEG_ROUNDING = 10_202;

function curveOf(asks: readonly BookLevel[], model: FeeModel): Curve {
  // Cheapest first, one entry per price: what a sweeping buy order takes, level by level.
  const sorted = asks
    .filter((l) => l.size > 0 && l.price > 0 && l.price < MICROS)
    .slice()
    .sort((x, y) => x.price - y.price);
  const curve: Curve = { prices: [], start: [0], notional: [0], fees: [0], carry: [0], feeRate: [], model };
  const sizes: Micros[] = [];
  for (const level of sorted) {
    const last = curve.prices.length - 1;
    if (last >= 0 && curve.prices[last] === level.price) sizes[last]! += level.size;
    else {
      curve.prices.push(level.price);
      sizes.push(level.size);
    }
  }
  for (let i = 0; i < sizes.length; i++) {
    const price = curve.prices[i]!;
    const size = sizes[i]!;
    curve.start.push(curve.start[i]! + size);
    curve.notional.push(curve.notional[i]! + notional(price, size));
    const charged = legFee(curve, i, price, size);
    curve.fees.push(curve.fees[i]! + charged.fee);
    curve.carry.push(charged.carry);
    curve.feeRate.push(takerFee(model, price, RATE_PROBE) / RATE_PROBE);
  }
  return curve;
}

const depthOf = (c: Curve) => c.start[c.start.length - 1]!;

/** The fee of the leg's fill of `size` at level i, after the fills of the levels before it. */
function legFee(c: Curve, i: number, price: Micros, size: Micros): { fee: Micros; carry: Micros } {
  return fillFee(c.model, { price, size, side: "buy", liquidity: "taker" }, c.carry[i]!);
}

/** The level a walk of `size` (> 0) ends on: start[i] < size ≤ start[i + 1]. */
function levelAt(c: Curve, size: Micros): number {
  let lo = 0;
  let hi = c.prices.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (c.start[mid + 1]! < size) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function legCost(c: Curve, size: Micros): LegCost {
  if (size <= 0) return { cost: 0, fees: 0, averagePrice: 0 };
  const i = levelAt(c, size);
  const price = c.prices[i]!;
  const rest = size - c.start[i]!;
  const cost = c.notional[i]! + notional(price, rest);
  const fees = c.fees[i]! + legFee(c, i, price, rest).fee;
  return { cost, fees, averagePrice: Math.round((cost / size) * MICROS) };
}

function sizeResult(a: Curve, b: Curve, size: Micros): SizeResult {
  const legA = legCost(a, size);
  const legB = legCost(b, size);
  const cost = legA.cost + legB.cost;
  const fees = legA.fees + legB.fees;
  return { size, cost, fees, payout: size, profit: size - cost - fees, legs: [legA, legB] };
}

/**
 * The profit-maximising lot multiple S with `from` ≤ S ≤ depth (the largest on ties), or null when
 * the books cannot fill `from` pairs.
 */
function bestSize(a: Curve, b: Curve, lot: Micros, depth: Micros, from: Micros): SizeResult | null {
  let best: SizeResult | null = null;
  let taken = 0; // pairs taken before the current stretch
  let i = 0;
  let j = 0;
  while (taken < depth) {
    const to = Math.min(a.start[i + 1]!, b.start[j + 1]!, depth);
    // Lot multiples of this stretch that the best size may be.
    const firstLot = Math.max(from, (Math.floor(taken / lot) + 1) * lot);
    const lastLot = Math.floor(to / lot) * lot;
    if (firstLot <= lastLot) {
      // profit(S) = constant + slope × S on the stretch, up to rounding of less than `bound`.
      const slope = 1 - (a.prices[i]! + b.prices[j]!) / MICROS - a.feeRate[i]! - b.feeRate[j]!;
      const bound = 4 * LEG_ROUNDING + 1e-9 * (lastLot - firstLot) + 16;
      const reach = Math.abs(slope) < 1e-12 ? Number.POSITIVE_INFINITY : bound / Math.abs(slope);
      let lo = firstLot;
      let hi = lastLot;
      // Sizes further than `reach` from the stretch's better end are strictly worse than that end.
      if (slope > 0 && lastLot - reach > lo) lo = Math.max(lo, Math.floor((lastLot - reach) / lot) * lot);
      if (slope < 0 && firstLot + reach < hi) hi = Math.min(hi, Math.ceil((firstLot + reach) / lot) * lot);
      for (let size = lo; size <= hi; size += lot) {
        const result = sizeResult(a, b, size);
        // Sizes come in increasing order: `>=` keeps the largest of equally profitable sizes.
        if (best === null || result.profit >= best.profit) best = result;
      }
    }
    taken = to;
    if (a.start[i + 1]! <= to) i++;
    if (b.start[j + 1]! <= to) j++;
  }
  return best;
}

/** The walk's stretches (both legs on one level each), the first `maxRows` of them. */
function depthRows(a: Curve, b: Curve, depth: Micros, maxRows: number): { rows: DepthRow[]; more: boolean } {
  const rows: DepthRow[] = [];
  let previous = sizeResult(a, b, 0);
  let i = 0;
  let j = 0;
  while (previous.size < depth) {
    if (rows.length >= maxRows) return { rows, more: true };
    const to = Math.min(a.start[i + 1]!, b.start[j + 1]!, depth);
    const pa = a.prices[i]!;
    const pb = b.prices[j]!;
    const end = sizeResult(a, b, to);
    rows.push({
      prices: [pa, pb],
      size: to - previous.size,
      cumulativeSize: to,
      grossEdge: MICROS - pa - pb,
      fees: end.fees - previous.fees,
      profit: end.profit - previous.profit,
      cumulativeProfit: end.profit,
    });
    previous = end;
    if (a.start[i + 1]! <= to) i++;
    if (b.start[j + 1]! <= to) j++;
  }
  return { rows, more: false };
}

function direction(
  legs: [LegRef, LegRef],
  a: Curve,
  b: Curve,
  lot: Micros,
  minSize: Micros,
  maxRows: number,
): DirectionResult {
  const depth = Math.floor(Math.min(depthOf(a), depthOf(b)) / lot) * lot;
  const best = bestSize(a, b, lot, depth, lot);
  const { rows, more } = depthRows(a, b, depth, maxRows);
  return {
    legs,
    depth,
    first: depth >= lot ? sizeResult(a, b, lot) : null,
    best,
    bestFromMin: minSize <= lot ? best : bestSize(a, b, lot, depth, minSize),
    rows,
    moreRows: more,
  };
}

const rank = (d: DirectionResult) => d.best?.profit ?? Number.NEGATIVE_INFINITY;

/** Both directions of a pair, the better one first; or why the pair cannot be arbitraged. */
export function analyzeArbitrage(input: ArbitrageInput): ArbitrageResult {
  const { a, b, relation } = input;
  if (relation !== "identity" && relation !== "complement") {
    return {
      arbitrageable: false,
      reason: "relation_not_arbitrageable",
      message:
        `A ${relation} pair is not arbitrage: some outcomes pay on neither leg (or on both), ` +
        "so a hedged pair is not worth $1 for sure",
    };
  }
  const expected: PairPolarity = relation === "identity" ? "same" : "inverted";
  if (input.polarity !== undefined && input.polarity !== expected) {
    return {
      arbitrageable: false,
      reason: "polarity_mismatch",
      message: `The pair says ${relation} with polarity ${input.polarity}; which legs hedge each other is unclear`,
    };
  }
  const lot = input.lot ?? MICROS;
  if (!Number.isSafeInteger(lot) || lot <= 0) throw new RangeError("lot must be a positive integer");
  const minSize = Math.max(lot, Math.ceil((input.minSize ?? lot) / lot) * lot);
  const maxRows = input.maxRows ?? 5;

  const yes = (m: ArbitrageMarket) => curveOf(m.book.yes.asks, m.fees);
  const no = (m: ArbitrageMarket) => curveOf(m.book.no.asks, m.fees);
  const ref = (m: ArbitrageMarket, outcome: Outcome): LegRef => ({
    marketId: m.marketId,
    venue: m.venue,
    outcome,
  });
  const aYes = yes(a);
  const aNo = no(a);
  // identity: A's YES is hedged by B's NO; complement: by B's YES.
  const [hedgeOfYes, hedgeOfNo]: [Outcome, Outcome] = relation === "identity" ? ["no", "yes"] : ["yes", "no"];
  const curveB = (outcome: Outcome) => (outcome === "yes" ? yes(b) : no(b));
  const directions: [DirectionResult, DirectionResult] = [
    direction([ref(a, "yes"), ref(b, hedgeOfYes)], aYes, curveB(hedgeOfYes), lot, minSize, maxRows),
    direction([ref(a, "no"), ref(b, hedgeOfNo)], aNo, curveB(hedgeOfNo), lot, minSize, maxRows),
  ];
  const [x, y] = directions;
  const swap =
    rank(y) > rank(x) ||
    (rank(y) === rank(x) &&
      (y.first?.profit ?? Number.NEGATIVE_INFINITY) > (x.first?.profit ?? Number.NEGATIVE_INFINITY));
  return {
    arbitrageable: true,
    relation,
    minSize,
    lot,
    directions: swap ? [y, x] : [x, y],
  };
}
