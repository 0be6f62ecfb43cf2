/**
 * Cross-venue events (the spec's `event_id`): the non-rejected identity and complement pairs, linked
 * by shared markets, form one event each. Whoever changes that graph (an operator in their
 * transaction, the runner once at the end of a run) recomputes the touched components here, so ids
 * survive the same way whatever caused the change: a pair joining an event takes its id, merged
 * events keep the oldest id, and when a split happens the part holding the oldest pair keeps the id
 * and the others get new ones. Ids are time-sortable, so the smaller id is the older.
 */
import { isoFromMs } from "../infra/clock";
import type { DbOrTrx } from "../infra/db/store";
import { newId } from "../infra/ids";
import * as repo from "./repo";

/** Recomputes the events of the components holding `seeds`. Call it under `repo.lockMatches`. */
export async function regroup(trx: DbOrTrx, seeds: Set<string>, nowMs: number): Promise<void> {
  const edges = await reachableEdges(trx, seeds);
  const changes = eventAssignments(edges, () => newId("xev", nowMs));
  await repo.setEventIds(trx, changes, isoFromMs(nowMs));
}

/**
 * Regrouping after a matcher run, once rather than per batch: a large component would otherwise be
 * walked again by every batch. Event-graph pairs still without an event (this run's, or a run that
 * died before this step) are picked up too, so an interrupted run heals on the next one.
 */
export async function regroupAfterRun(trx: DbOrTrx, touched: Set<string>, nowMs: number): Promise<void> {
  const seeds = new Set(touched);
  for (const edge of await repo.edgesWithoutEvent(trx)) seeds.add(edge.market_a).add(edge.market_b);
  if (seeds.size > 0) await regroup(trx, seeds, nowMs);
}

/**
 * Every edge reachable from the seeds, breadth first over all seeds at once: one query per level
 * and chunk, not per market.
 */
async function reachableEdges(trx: DbOrTrx, seeds: Set<string>): Promise<repo.EdgeRow[]> {
  const edges = new Map<string, repo.EdgeRow>();
  const reached = new Set(seeds);
  let frontier = [...seeds];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const edge of await repo.edgesTouching(trx, frontier)) {
      if (edges.has(edge.id)) continue;
      edges.set(edge.id, edge);
      for (const market of [edge.market_a, edge.market_b]) {
        if (!reached.has(market)) {
          reached.add(market);
          next.push(market);
        }
      }
    }
    frontier = next;
  }
  return [...edges.values()];
}

/**
 * The event id each edge should carry, for the edges whose id changes. Kept apart from the queries
 * so which id survives a merge or a split is decided in one place.
 */
function eventAssignments(
  edges: readonly repo.EdgeRow[],
  mintEventId: () => string,
): Array<{ id: string; eventId: string }> {
  const components = connectedComponents(edges);
  // For each id in use: the components carrying it, and the oldest pair carrying it in each.
  const carriers = new Map<string, Array<{ component: number; oldest: string }>>();
  components.forEach((pairs, component) => {
    const oldest = new Map<string, string>();
    for (const pair of pairs) {
      if (pair.event_id === null) continue;
      const known = oldest.get(pair.event_id);
      if (known === undefined || pair.id < known) oldest.set(pair.event_id, pair.id);
    }
    for (const [eventId, pairId] of oldest) {
      const list = carriers.get(eventId) ?? [];
      list.push({ component, oldest: pairId });
      carriers.set(eventId, list);
    }
  });
  const assigned: Array<string | undefined> = components.map(() => undefined);
  for (const eventId of [...carriers.keys()].sort()) {
    const options = carriers
      .get(eventId)!
      .filter((option) => assigned[option.component] === undefined)
      .sort((x, y) => (x.oldest < y.oldest ? -1 : x.oldest > y.oldest ? 1 : 0));
    if (options[0]) assigned[options[0].component] = eventId;
  }
  const changes: Array<{ id: string; eventId: string }> = [];
  for (let i = 0; i < components.length; i++) {
    const eventId = assigned[i] ?? mintEventId();
    for (const pair of components[i]!) if (pair.event_id !== eventId) changes.push({ id: pair.id, eventId });
  }
  return changes;
}

/** The edges split by the markets they link (union-find), in order of each component's first edge. */
function connectedComponents(edges: readonly repo.EdgeRow[]): repo.EdgeRow[][] {
  const parent = new Map<string, string>();
  const root = (market: string): string => {
    let node = market;
    while (parent.has(node) && parent.get(node) !== node) node = parent.get(node)!;
    parent.set(market, node);
    return node;
  };
  for (const edge of edges) {
    const a = root(edge.market_a);
    const b = root(edge.market_b);
    if (a !== b) parent.set(a, b);
  }
  const byRoot = new Map<string, repo.EdgeRow[]>();
  for (const edge of edges) {
    const key = root(edge.market_a);
    const list = byRoot.get(key) ?? [];
    list.push(edge);
    byRoot.set(key, list);
  }
  return [...byRoot.values()];
}
