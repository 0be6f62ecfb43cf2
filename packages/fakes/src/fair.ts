/**
 * One fair value per cross-listed contract, shared by both fake venues, so that their books for the
 * same contract agree the way real venues' do: within fees and a little noise most of the time, with
 * now and then a short dislocation that leaves a cent or two of arbitrage after fees and closes over
 * the next few steps.
 *
 * The markets the world labels `sameAs` / `complementOf` (see `crossListings`) form groups; a group
 * has one fair-value path for its reference contract, and each member quotes it (1 − it when the
 * member's YES is the reference's NO) plus its own small noise, with its own spread. Every figure is
 * a pure function of the seed, the world and the simulation step, so the two fakes, each stepping
 * its own copy, quote the same path at the same step (the demo steps both on one interval; tests
 * step them by hand). Unlabelled markets are not here and keep each fake's own random walk.
 *
 * Dislocations: the steps are cut into windows; each window draws up to `SLOTS` of them, each on one
 * group: the fair value jumps, one venue (the leader) quotes the new value at once while the other
 * (the laggard) keeps its old quote for a few steps, then catches up. The jump is sized from both
 * venues' spreads and taker fees so that the best hedged pair earns the drawn edge (0.5–1.5¢, up to a
 * tick more once on the tick) per contract, and no more than `MAX_DISLOCATED` pairs are dislocated at once.
 * Outside flow on the laggard leans towards the new value meanwhile (`flow`), as arbitrageurs would.
 */
import { seedFees as kalshiSeedFees, seedTick as kalshiSeedTick } from "./kalshi/state";
import { listingOf } from "./polymarket/state";
import { crossListings } from "./world/cross";
import { hash32, Rng } from "./world/random";
import type { SeedMarket, VenueName } from "./world/seed";

/** Price units per dollar, as both fakes count them (1e-4). */
const SCALE = 10_000;

/** Steps per scheduling window, and dislocations drawn per window (each with `P_DISLOCATION`). */
const WINDOW = 20;
const SLOTS = 2;
const P_DISLOCATION = 0.7;
/** Most cross-venue pairs dislocated at one step. */
const MAX_DISLOCATED = 3;
/** Steps the laggard stays on its old quote, then steps it takes to catch up (inclusive ranges). */
const LAG: [number, number] = [4, 9];
const CATCH_UP: [number, number] = [3, 6];
/** Edge per contract after fees a dislocation is sized for, in dollars. */
const EDGE: [number, number] = [0.005, 0.015];
/** A jump holds this many steps, then fades out linearly over `FADE`, so the fair value stays put. */
const HOLD = 150;
const FADE = 450;
/** Venue noise: at most this far (dollars) from the fair value, changing smoothly every `NOISE_STEPS`. */
const NOISE = 0.003;
const NOISE_STEPS = 12;
/**
 * Share of steps a venue quotes one side a tick wider than its spread (a level being refilled), so
 * its mid moves step to step as real ones do; wider quotes never make arbitrage.
 */
const JITTER = 0.2;
/** The fair value stays within these bounds (dollars). */
const FLOOR = 0.02;
const CEILING = 0.98;

/** Best YES bid and ask, in price units on the market's tick. */
export interface Quote {
  bid: number;
  ask: number;
}

interface Member {
  venue: VenueName;
  key: string;
  /** This market's YES is the group's reference NO. */
  inverted: boolean;
  /** Price units. */
  tick: number;
  /** Ask − bid, price units. */
  width: number;
  /** Taker fee of a one-contract order at a price (dollars). */
  fee: (price: number) => number;
  group: Group;
}

type Relation = "identity" | "complement";

interface Group {
  id: string;
  members: Member[];
  /** Cross-venue pairs: a Polymarket member, a Kalshi member and how they relate. */
  pairs: { pm: Member; kalshi: Member; relation: Relation }[];
  /** Reference fair value at step 0 (dollars) and the swing of its slow path. */
  anchor: number;
  amplitude: number;
  phases: [number, number];
  /** Scheduled dislocations, in step order. */
  dislocations: Dislocation[];
}

interface Dislocation {
  /** First step of the new fair value. */
  t0: number;
  lag: number;
  catchUp: number;
  /** Jump of the reference fair value (dollars). */
  jump: number;
  laggard: VenueName;
  /** Each member's quote just before the jump, and the one it quotes once caught up. */
  stale: Map<Member, Quote>;
  fresh: Map<Member, Quote>;
}

const end = (d: Dislocation) => d.t0 + d.lag + d.catchUp;
const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);
const ceilCent = (x: number) => Math.ceil(Math.round(x * 1e8) / 1e6) / 100;

/** Kalshi's taker fee of a one-contract order: the series' curve, rounded up to the cent. */
function kalshiFee(s: SeedMarket): (price: number) => number {
  const { feeType, feeMultiplier } = kalshiSeedFees(s);
  return (p) => ceilCent(feeType === "flat" ? 0.0175 * feeMultiplier : 0.07 * feeMultiplier * p * (1 - p));
}

/** Polymarket's taker fee of one share (rounding below a tenth of a cent is left out). */
function polymarketFee(seed: number, s: SeedMarket): (price: number) => number {
  const { fees } = listingOf(seed, s);
  return (p) => (fees ? fees.rate * (p * (1 - p)) ** fees.exponent : 0);
}

const trading = (s: SeedMarket) => s.status === undefined || s.status === "open" || s.status === "unopened";

export class FairValues {
  private readonly members = new Map<string, Member>();
  private readonly groups: Group[] = [];
  /** Windows whose dislocations are drawn (all of them up to this one). */
  private drawnThrough = 0;

  constructor(
    world: SeedMarket[],
    private readonly seed: number,
  ) {
    this.build(world);
  }

  /** The quote a market's house liquidity shows at `step`; null for a market without a shared path. */
  quote(venue: VenueName, key: string, step: number): Quote | null {
    const m = this.members.get(`${venue}:${key}`);
    if (!m) return null;
    this.draw(step);
    const d = this.dislocationAt(m.group, step);
    if (!d) return this.shown(m, step);
    if (m.venue !== d.laggard) return d.fresh.get(m)!;
    const caughtUp = step - (d.t0 + d.lag) + 1;
    if (caughtUp <= 0) return d.stale.get(m)!;
    // Catching up: part of the way from the old quote to the new one each step.
    const from = d.stale.get(m)!;
    const to = d.fresh.get(m)!;
    const mid = (q: Quote) => (q.bid + q.ask) / 2;
    return this.fromMid(m, (mid(from) + ((mid(to) - mid(from)) * caughtUp) / (d.catchUp + 1)) / SCALE);
  }

  /**
   * Which side outside flow takes on a market at `step` (in its own YES terms: "yes" buys YES): the
   * side a lagging quote is mispriced on, while it lags; null when flow is random.
   */
  flow(venue: VenueName, key: string, step: number): "yes" | "no" | null {
    const m = this.members.get(`${venue}:${key}`);
    if (!m) return null;
    this.draw(step);
    const d = this.dislocationAt(m.group, step);
    if (!d || d.laggard !== venue) return null;
    const from = d.stale.get(m)!;
    const to = d.fresh.get(m)!;
    return to.bid + to.ask > from.bid + from.ask ? "yes" : "no";
  }

  // ---- the world's groups -------------------------------------------------------------------

  private build(world: SeedMarket[]): void {
    const seeds = new Map(world.map((s) => [`${s.venue}:${s.key}`, s]));
    // Union-find with parity: `inverted` relative to the root.
    const parent = new Map<string, { root: string; inverted: boolean }>();
    const find = (id: string): { root: string; inverted: boolean } => {
      const p = parent.get(id);
      if (!p) return { root: id, inverted: false };
      const up = find(p.root);
      const found = { root: up.root, inverted: p.inverted !== up.inverted };
      parent.set(id, found);
      return found;
    };
    const links: { pm: string; kalshi: string; relation: Relation }[] = [];
    for (const l of crossListings(world)) {
      if (l.relation === "lookalike") continue;
      const pm = `polymarket:${l.polymarket}`;
      const kalshi = `kalshi:${l.kalshi}`;
      const a = seeds.get(pm);
      const b = seeds.get(kalshi);
      if (!a || !b || !trading(a) || !trading(b)) continue;
      links.push({ pm, kalshi, relation: l.relation });
      const ra = find(pm);
      const rb = find(kalshi);
      const inverted = l.relation === "complement";
      if (ra.root !== rb.root)
        parent.set(rb.root, { root: ra.root, inverted: (ra.inverted !== rb.inverted) !== inverted });
    }
    // Labels that contradict each other (A = B and A = not B): no shared path for that group.
    const broken = new Set<string>();
    for (const l of links) {
      const a = find(l.pm);
      const b = find(l.kalshi);
      if ((a.inverted !== b.inverted) !== (l.relation === "complement")) broken.add(a.root);
    }
    const byRoot = new Map<string, Group>();
    const memberOf = (id: string): Member | null => {
      const { root, inverted } = find(id);
      if (broken.has(root)) return null;
      const existing = this.members.get(id);
      if (existing) return existing;
      let group = byRoot.get(root);
      if (!group) {
        group = {
          id: root,
          members: [],
          pairs: [],
          anchor: 0,
          amplitude: 0,
          phases: [0, 0],
          dislocations: [],
        };
        byRoot.set(root, group);
        this.groups.push(group);
      }
      const s = seeds.get(id)!;
      const tick = s.venue === "kalshi" ? kalshiSeedTick(s) : Math.round(s.tickSize * SCALE);
      const wide = hash32(`${this.seed}:fair:width:${id}`) % 2 === 1;
      const m: Member = {
        venue: s.venue,
        key: s.key,
        inverted,
        tick,
        // Polymarket's house quotes a step either side (a cent, or half a cent on a finer tick);
        // Kalshi's one or two cents wide.
        width: s.venue === "polymarket" ? (tick >= 100 ? 2 * tick : 100) : wide ? 200 : 100,
        fee: s.venue === "kalshi" ? kalshiFee(s) : polymarketFee(this.seed, s),
        group,
      };
      group.members.push(m);
      this.members.set(id, m);
      return m;
    };
    for (const l of links) {
      const pm = memberOf(l.pm);
      const kalshi = memberOf(l.kalshi);
      if (pm && kalshi) pm.group.pairs.push({ pm, kalshi, relation: l.relation });
    }
    for (const g of this.groups) {
      const prices = g.members.map((m) => {
        const p = seeds.get(`${m.venue}:${m.key}`)!.yesPrice;
        return m.inverted ? 1 - p : p;
      });
      g.anchor = clamp(prices.reduce((a, b) => a + b, 0) / prices.length, FLOOR, CEILING);
      // Swings of a few cents, smaller near 0 and 1.
      g.amplitude = 0.05 * Math.min(1, 4 * g.anchor * (1 - g.anchor));
      const h = hash32(`${this.seed}:fair:phase:${g.id}`);
      g.phases = [(h % 1000) / 100, ((h >>> 10) % 1000) / 100];
    }
  }

  // ---- paths ----------------------------------------------------------------------------------

  /** The reference fair value of a group at a step (dollars), plus `extra`. */
  private fair(g: Group, step: number, extra = 0): number {
    const wave = (n: number) => 0.7 * Math.sin(n / 900 + g.phases[0]) + 0.3 * Math.sin(n / 170 + g.phases[1]);
    // Starts on the anchor: the seeded books are where step 0 is.
    let f = g.anchor + g.amplitude * (wave(step) - wave(0)) + extra;
    for (const d of g.dislocations) {
      if (d.t0 > step) break;
      const age = step - d.t0;
      f += d.jump * (age < HOLD ? 1 : Math.max(0, 1 - (age - HOLD) / FADE));
    }
    return clamp(f, FLOOR, CEILING);
  }

  /** Smooth noise in [-1, 1] of one market. */
  private noise(m: Member, step: number): number {
    const i = Math.floor(step / NOISE_STEPS);
    const w = (1 - Math.cos(((step - i * NOISE_STEPS) / NOISE_STEPS) * Math.PI)) / 2;
    const at = (j: number) =>
      (hash32(`${this.seed}:fair:noise:${m.venue}:${m.key}:${j}`) / 0xffffffff) * 2 - 1;
    return at(i) * (1 - w) + at(i + 1) * w;
  }

  /** A member's quote with nothing dislocated, `extra` added to the group's fair value. */
  private live(m: Member, step: number, extra = 0): Quote {
    const f = this.fair(m.group, step, extra);
    return this.fromMid(m, (m.inverted ? 1 - f : f) + NOISE * this.noise(m, step));
  }

  /** The live quote as the venue shows it at a step: now and then one side a tick wider. */
  private shown(m: Member, step: number): Quote {
    const q = this.live(m, step);
    const u = hash32(`${this.seed}:fair:jitter:${m.venue}:${m.key}:${step}`) / 0x100000000;
    if (u < JITTER / 2 && q.bid - m.tick >= m.tick) return { bid: q.bid - m.tick, ask: q.ask };
    if (u >= JITTER / 2 && u < JITTER && q.ask + m.tick <= SCALE - m.tick)
      return { bid: q.bid, ask: q.ask + m.tick };
    return q;
  }

  /** The quote of a given width centred on `mid` (dollars) as near as the tick allows. */
  private fromMid(m: Member, mid: number): Quote {
    const bid = clamp(
      Math.round((mid * SCALE - m.width / 2) / m.tick) * m.tick,
      m.tick,
      SCALE - m.tick - m.width,
    );
    return { bid, ask: bid + m.width };
  }

  // ---- dislocations ---------------------------------------------------------------------------

  private dislocationAt(g: Group, step: number): Dislocation | null {
    for (let i = g.dislocations.length - 1; i >= 0; i--) {
      const d = g.dislocations[i]!;
      if (d.t0 <= step) return step < end(d) ? d : null;
    }
    return null;
  }

  /** Draws every window up to the one `step` is in, in order (each depends on the ones before). */
  private draw(step: number): void {
    const last = Math.floor(step / WINDOW);
    for (let w = this.drawnThrough + 1; w <= last; w++) this.drawWindow(w);
    if (last > this.drawnThrough) {
      this.drawnThrough = last;
      // What no step from here on can reach any more.
      const horizon = step - HOLD - FADE - 2 * WINDOW;
      for (const g of this.groups)
        while ((g.dislocations[0]?.t0 ?? horizon) < horizon) g.dislocations.shift();
    }
  }

  private drawWindow(w: number): void {
    const rng = new Rng(hash32(`${this.seed}:fair:window:${w}`));
    for (let slot = 0; slot < SLOTS; slot++) {
      // Every draw is made whether or not it is used, so one skipped slot changes nothing else.
      const happens = rng.next() < P_DISLOCATION;
      const g = this.groups[rng.int(0, this.groups.length - 1)];
      const t0 = w * WINDOW + rng.int(0, WINDOW - 1);
      const lag = rng.int(...LAG);
      const catchUp = rng.int(...CATCH_UP);
      const up = rng.next() < 0.5;
      const edge = EDGE[0] + rng.next() * (EDGE[1] - EDGE[0]);
      const laggard: VenueName = rng.next() < 0.5 ? "polymarket" : "kalshi";
      if (!happens || !g || g.pairs.length === 0) continue;
      const previous = g.dislocations.at(-1);
      if (previous && end(previous) >= t0 - 1) continue;
      if (this.dislocatedPairs(t0, t0 + lag + catchUp) + g.pairs.length > MAX_DISLOCATED) continue;
      const sized = this.sized(g, t0, up, edge, laggard);
      if (sized) g.dislocations.push({ t0, lag, catchUp, laggard, ...sized });
    }
  }

  /** Most pairs dislocated at one step of [from, to). */
  private dislocatedPairs(from: number, to: number): number {
    let most = 0;
    for (let step = from; step < to; step++) {
      let n = 0;
      for (const g of this.groups)
        for (const d of g.dislocations) if (d.t0 <= step && step < end(d)) n += g.pairs.length;
      most = Math.max(most, n);
    }
    return most;
  }

  /**
   * The smallest jump (either way, `up` first) after which the best hedged pair between the
   * laggard's old quotes and the leader's new ones earns at least `edge` per contract after fees.
   */
  private sized(
    g: Group,
    t0: number,
    up: boolean,
    edge: number,
    laggard: VenueName,
  ): Pick<Dislocation, "jump" | "stale" | "fresh"> | null {
    // The plain quote (no jitter), so catching up starts exactly from what the laggard shows.
    const stale = new Map(g.members.map((m) => [m, this.live(m, t0 - 1)]));
    const f0 = this.fair(g, t0);
    for (const sign of up ? [1, -1] : [-1, 1]) {
      for (let jump = 0.001; jump <= 0.15; jump += 0.001) {
        const j = (sign * Math.round(jump * 1000)) / 1000;
        if (f0 + j < FLOOR || f0 + j > CEILING) break;
        const fresh = new Map(g.members.map((m) => [m, this.live(m, t0, j)]));
        const quotes = (m: Member) => (m.venue === laggard ? stale.get(m)! : fresh.get(m)!);
        if (Math.max(...g.pairs.map((p) => edgeOf(p, quotes(p.pm), quotes(p.kalshi)))) >= edge)
          return { jump: j, stale, fresh };
      }
    }
    return null;
  }
}

/**
 * Best edge per contract after both taker fees (dollars) of one hedged pair at the top of two books:
 * identity, YES on one + NO on the other; complement, YES + YES or NO + NO.
 */
function edgeOf(p: { pm: Member; kalshi: Member; relation: Relation }, pm: Quote, kalshi: Quote): number {
  const leg = (m: Member, units: number) => units / SCALE + m.fee(units / SCALE);
  const no = (units: number) => SCALE - units;
  if (p.relation === "identity")
    return Math.max(
      1 - leg(p.pm, pm.ask) - leg(p.kalshi, no(kalshi.bid)),
      1 - leg(p.pm, no(pm.bid)) - leg(p.kalshi, kalshi.ask),
    );
  return Math.max(
    1 - leg(p.pm, pm.ask) - leg(p.kalshi, kalshi.ask),
    1 - leg(p.pm, no(pm.bid)) - leg(p.kalshi, no(kalshi.bid)),
  );
}
