/**
 * The operators' match review desk (issue 22 part 8): the queue of candidate pairs, most
 * consequential first; one pair side by side with the phrases the matcher read marked in both
 * markets' text; verify (correcting relation and polarity) or reject with a reason code; and pairing
 * two markets by hand. Matches are shared by every account, so only an operator sees any of it: for
 * anyone else every page here is the console's 404. Decisions go through MatchingService's curation,
 * recorded as the signed-in operator's account (no API key is involved: `decided_by_key` is null).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../http/errors";
import { type ContractFeatures, extractFeatures } from "../matching/features";
import { POLARITIES, REJECT_REASONS, type RejectReason } from "../matching/pairs";
import type { CandidateDetail, MatchDetail } from "../matching/reads";
import type { FoundMarket, ReviewMarketRow } from "../matching/repo";
import { toMatchable } from "../matching/runner";
import { type Polarity, RELATIONS, type Relation } from "../matching/types";
import type { VenueId } from "../venues/model";
import { type FormBody, formOf, messageOf, notFound, redirect, render, requireUser, text } from "./context";
import { html, type SafeHtml } from "./html";
import { type ConsoleUser, csrfField, type Flash, field, num, time } from "./layout";
import type { ConsoleDeps } from "./plugin";
import { highlight } from "./review-highlight";

const PAGE_SIZE = 25;
const SEARCH_LIMIT = 15;
/** The two venues a pair by hand joins, in the order pairs are stored (market A first). */
const PAIR_VENUES = ["polymarket", "kalshi"] as const satisfies readonly VenueId[];

const VENUE_NAMES: Record<string, string> = { polymarket: "Polymarket", kalshi: "Kalshi" };
const venueName = (venue: string | undefined) => (venue ? (VENUE_NAMES[venue] ?? venue) : "—");

const RELATION_WORDS: Record<Relation, string> = {
  identity: "identity: the same contract",
  complement: "complement: A's YES is B's NO",
  subset: "subset: A's YES implies B's YES",
  superset: "superset: B's YES implies A's YES",
  overlap: "overlap: both can be YES, neither implies the other",
  disjoint: "disjoint: both cannot be YES",
};

const POLARITY_WORDS: Record<Polarity, string> = {
  same: "same: A's YES is hedged by B's NO",
  inverted: "inverted: A's YES is hedged by B's YES",
};

/** What each reason code of the API means (matching/README.md). */
const REASON_WORDS: Record<RejectReason, string> = {
  different_contract: "Another question altogether",
  settlement_source: "Another settlement source (station, index, exchange, release)",
  comparator: "Another comparator (≥ vs >)",
  threshold: "Another strike, or a threshold vs a bucket",
  window: "Another deadline, period or close instant",
  event_vs_announcement: "The event vs its announcement (race call vs certification…)",
  tie_void_rules: "Ties, voids or postponements settle differently",
  polarity: "YES on one is neither the YES nor the NO of the other",
  duplicate: "The same pair twice (a relisted market)",
  other: "Other (say why in the note)",
};

const isRelation = (v: string): v is Relation => (RELATIONS as readonly string[]).includes(v);
const isPolarity = (v: string): v is Polarity => (POLARITIES as readonly string[]).includes(v);
const isReason = (v: string): v is RejectReason => (REJECT_REASONS as readonly string[]).includes(v);

/**
 * The signed-in operator, or null after answering: the sign-in page when signed out, the console's
 * 404 for anyone else (the desk does not exist for them, not even as a refusal).
 */
function requireOperator(request: FastifyRequest, reply: FastifyReply): ConsoleUser | null {
  const user = requireUser(request, reply);
  if (!user) return null;
  if (user.account.operator) return user;
  notFound(request, reply);
  return null;
}

/** Money-like micro-units as a whole number in the venue's unit (dollars, or contracts on Kalshi). */
const whole = (micros: number | null | undefined) =>
  micros === null || micros === undefined ? "—" : num(Math.round(micros / 1_000_000));

const percent = (confidence: number) => `${Math.round(confidence * 100)}%`;

/** A venue's page for a market, when it is a web address (venue data is not trusted to be one). */
function venueLink(url: string | null | undefined, venue: string): SafeHtml {
  if (!url || !/^https?:\/\//i.test(url)) return html`<span class="muted">no link from the venue</span>`;
  return html`<a href="${url}" rel="noopener noreferrer" target="_blank">Open on ${venueName(venue)}</a>`;
}

function statusBadge(status: string): SafeHtml {
  const kind = status === "verified" ? "ok" : status === "rejected" ? "error" : "warn";
  return html`<span class="badge ${kind}">${status}</span>`;
}

function list(items: string[], empty: string): SafeHtml {
  if (items.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>`;
}

function parsed(column: string): string[] {
  try {
    const value = JSON.parse(column) as unknown;
    return Array.isArray(value) ? value.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

function options<T extends string>(
  values: readonly T[],
  words: Record<T, string>,
  selected: string,
): SafeHtml[] {
  return values.map(
    (v) => html`<option value="${v}" ${v === selected ? html`selected` : ""}>${words[v]}</option>`,
  );
}

const KEY_LEGEND = html`<p class="muted" data-testid="keys">Keyboard: <kbd>v</kbd> verify ·
  <kbd>r</kbd> reject (choose the reason) · <kbd>j</kbd> next candidate · <kbd>k</kbd> previous candidate</p>`;

// --- The queue -----------------------------------------------------------------------------------

function marketCell(info: MatchDetail["a"], id: string, weight: number | undefined): SafeHtml {
  return html`<span class="badge">${venueName(info?.venue ?? id.split(":")[0])}</span>
    ${info?.question ?? info?.title ?? id}
    <div class="muted">Closes ${time(info?.close_time)}${weight !== undefined ? html` · weight ${whole(weight)}` : ""}</div>`;
}

function queueRow(item: CandidateDetail, position: number, first: boolean): SafeHtml {
  const { row, a, b } = item;
  const blockers = parsed(row.blockers);
  return html`<tr data-testid="candidate" data-id="${row.id}">
    <td data-label="#" class="num">${position + 1}</td>
    <td data-label="Market A">${marketCell(a, row.market_a, row.weight_a)}</td>
    <td data-label="Market B">${marketCell(b, row.market_b, row.weight_b)}</td>
    <td data-label="Relation">${row.relation} <span class="muted">(${row.polarity})</span></td>
    <td data-label="Confidence" class="num">${percent(row.confidence)}</td>
    <td data-label="Blockers" class="num">${blockers.length > 0 ? html`<span class="badge warn">${blockers.length}</span>` : html`<span class="muted">none</span>`}</td>
    <td data-label="Review" class="num"><a href="/console/review/${row.id}" ${first ? html`data-key="j"` : ""}>Review</a></td>
  </tr>`;
}

// --- One pair ------------------------------------------------------------------------------------

function readingSummary(f: ContractFeatures): SafeHtml {
  const items: string[] = [];
  if (f.measure) items.push(`Condition: ${f.measure.text} (from the ${f.measure.from})`);
  if (f.date) {
    const kind =
      f.date.kind === "by"
        ? "by (a deadline)"
        : f.date.kind === "on"
          ? "on (an instant or day)"
          : "in (a period)";
    items.push(`Date: ${kind} ${f.date.key}`);
  }
  if (f.observation) {
    items.push(
      `Observed: ${f.observation === "any_time" ? "at any time" : f.observation === "at_time" ? "at an instant" : "throughout the window"}`,
    );
  }
  for (const [group, values] of f.sources) items.push(`Source (${group}): ${[...values].join(", ")}`);
  if (f.trigger) items.push(`Settled by: ${f.trigger}`);
  if (f.basis.size > 0) items.push(`What counts: ${[...f.basis].join(", ")}`);
  for (const [situation, outcome] of f.voidPolicy) items.push(`If ${situation}: ${outcome}`);
  if (f.placeholderRules) items.push("The rules are missing or a placeholder");
  return list(items, "Nothing beyond the words of the question.");
}

function marketSection(
  side: "a" | "b",
  id: string,
  info: MatchDetail["a"],
  market: ReviewMarketRow | undefined,
): SafeHtml {
  const headingId = `market-${side}-title`;
  if (!market) {
    return html`<section class="card" aria-labelledby="${headingId}">
      <h2 id="${headingId}">Market ${side.toUpperCase()}: ${id}</h2>
      <p class="muted">This market is no longer in the catalog.</p></section>`;
  }
  const features = extractFeatures(toMatchable(market));
  return html`<section class="card" aria-labelledby="${headingId}" data-testid="market-${side}">
    <p><span class="badge">Market ${side.toUpperCase()}</span> <span class="badge">${venueName(market.venue)}</span>
      <span class="badge">${market.status}</span></p>
    <h2 id="${headingId}">${market.title}</h2>
    <dl>
      <dt>Question</dt><dd data-testid="question">${highlight(market.question || market.title, features, { limit: 500 })}</dd>
      ${market.event_title ? html`<dt>Event</dt><dd>${market.event_title}</dd>` : ""}
      <dt>YES means</dt><dd>${info ? yesLabel(info.outcomes) : "Yes"}</dd>
      <dt>Closes</dt><dd>${time(market.close_time)}</dd>
      <dt>24 h volume · liquidity</dt><dd>${whole(market.volume_24h)} · ${whole(market.liquidity)}</dd>
      <dt>Settlement source</dt><dd>${market.settlement_source ? highlight(market.settlement_source, features, { limit: 1000 }) : html`<span class="muted">none given</span>`}</dd>
      <dt>On the venue</dt><dd>${venueLink(market.url, market.venue)} ${shortId(market.venue_market_id)}</dd>
    </dl>
    <h3>Rules</h3>
    <div class="rules" data-testid="rules">${market.rules ? highlight(market.rules, features, { clauses: true }) : html`<p class="muted">The venue gives no rules.</p>`}</div>
    <h3>What the matcher read</h3>
    ${readingSummary(features)}
  </section>`;
}

/** A market's id (a Kalshi ticker says something; a Polymarket condition hash is cut short, whole in its title). */
function shortId(id: string): SafeHtml {
  const shown = id.length > 32 ? `${id.slice(0, 22)}…${id.slice(-6)}` : id;
  return html`<span class="muted mono" title="${id}">${shown}</span>`;
}

function yesLabel(outcomes: string): string {
  try {
    return (JSON.parse(outcomes) as { yes?: { label?: string } }).yes?.label ?? "Yes";
  } catch {
    return "Yes";
  }
}

function decision(row: MatchDetail["row"]): SafeHtml {
  if (row.status === "candidate") return html``;
  const who = row.decided_by === "matcher" ? "the matcher" : "an operator";
  return html`<p>${row.status === "verified" ? "Verified" : "Rejected"} by ${who} ${time(row.decided_at)}${
    row.status_reason ? html` — reason <code>${row.status_reason}</code>` : ""
  }${row.status_note ? html`: “${row.status_note}”` : ""}.</p>`;
}

async function reviewPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  id: string,
): Promise<FastifyReply> {
  const detail = await deps.matching.get(id);
  const { row, a, b } = detail;
  const [markets, position] = await Promise.all([
    deps.matching.reviewMarkets([row.market_a, row.market_b]),
    deps.matching.candidatePosition(id),
  ]);
  // Next and previous in the queue; a pair already decided has left it, so "next" is its head.
  const at = async (offset: number) =>
    offset < 0 ? undefined : (await deps.matching.candidates({ limit: 1, offset })).items[0]?.row.id;
  const [next, previous] =
    position === undefined
      ? [await at(0), undefined]
      : await Promise.all([at(position + 1), at(position - 1)]);
  const marketA = markets.get(row.market_a);
  const marketB = markets.get(row.market_b);
  const titleA = marketA?.title ?? row.market_a;
  const reasons = parsed(row.reasons);
  const blockers = parsed(row.blockers);
  const caveats = parsed(row.caveats);
  return render(request, reply, {
    title: `Review: ${titleA}`,
    section: "review",
    body: html`<nav class="actions" aria-label="Queue">
        <a href="/console/review">Back to the queue</a>
        ${previous ? html`<a class="button secondary small" href="/console/review/${previous}" data-key="k" aria-keyshortcuts="k" rel="prev">Previous <kbd>k</kbd></a>` : ""}
        ${next ? html`<a class="button secondary small" href="/console/review/${next}" data-key="j" aria-keyshortcuts="j" rel="next">Next <kbd>j</kbd></a>` : ""}
        ${position !== undefined ? html`<span class="muted">Candidate ${position + 1} in the queue</span>` : ""}
      </nav>
      <h1>Review a pair ${statusBadge(row.status)}</h1>
      <div class="card" data-testid="verdict">
        <p><strong>Market A</strong> (${venueName(row.venue_a)}) is <strong data-testid="relation">${row.relation}</strong> of
          <strong>market B</strong> (${venueName(row.venue_b)}) · polarity <strong data-testid="polarity">${row.polarity}</strong>
          · confidence <strong>${percent(row.confidence)}</strong>
          ${row.curated && row.matcher_relation && row.matcher_relation !== row.relation ? html` · the matcher says <strong>${row.matcher_relation}</strong>` : ""}</p>
        ${decision(row)}
        <div class="grid2">
          <div><h2>Reasons</h2>${list(reasons, "None given.")}</div>
          <div>
            <h2>Blockers</h2>${list(blockers, "None: nothing keeps the matcher from deciding alone.")}
            <h2>Caveats</h2>${list(caveats, "None: the edge clauses agree.")}
          </div>
        </div>
      </div>
      ${KEY_LEGEND}
      <p class="muted">Marked in each market's text: what the matcher read there — the threshold and its
        comparator, dates and times, sources, what has to happen, and the tie, cancellation and
        postponement clauses. Point at a mark to see what was read.</p>
      <div class="grid2">
        ${marketSection("a", row.market_a, a, marketA)}
        ${marketSection("b", row.market_b, b, marketB)}
      </div>
      <div class="grid2">
        <form method="post" action="/console/review/${row.id}/verify" class="card stack" aria-labelledby="verify-heading">
          ${csrfField(user)}
          <h2 id="verify-heading">Verify</h2>
          <p class="muted">Correct the relation or polarity if the matcher got them wrong; read as “market A is … of market B”.</p>
          <div class="field"><label for="verify-relation">Relation</label>
            <select id="verify-relation" name="relation">${options(RELATIONS, RELATION_WORDS, row.relation)}</select></div>
          <div class="field"><label for="verify-polarity">Polarity</label>
            <select id="verify-polarity" name="polarity">${options(POLARITIES, POLARITY_WORDS, row.polarity)}</select></div>
          <div class="field"><label for="verify-note">Note (optional)</label>
            <input type="text" id="verify-note" name="note" maxlength="1000"></div>
          <div class="actions"><button type="submit" data-key="v" aria-keyshortcuts="v">Verify</button>
            <span class="muted">or press <kbd>v</kbd></span></div>
        </form>
        <form method="post" action="/console/review/${row.id}/reject" class="card stack" aria-labelledby="reject-heading">
          ${csrfField(user)}
          <h2 id="reject-heading">Reject</h2>
          <p class="muted">The matcher never proposes a rejected pair again.</p>
          <div class="field"><label for="reject-reason">Reason</label>
            <select id="reject-reason" name="reason" required data-key="r" aria-keyshortcuts="r">
              <option value="">Choose a reason…</option>
              ${REJECT_REASONS.map((r) => html`<option value="${r}">${r}: ${REASON_WORDS[r]}</option>`)}
            </select></div>
          <div class="field"><label for="reject-note">Note (optional; say why for “other”)</label>
            <input type="text" id="reject-note" name="note" maxlength="1000"></div>
          <div class="actions"><button type="submit" class="danger">Reject</button>
            <span class="muted"><kbd>r</kbd> goes to the reason</span></div>
        </form>
      </div>`,
  });
}

/**
 * After a decision: the candidate now at the decided pair's place in the queue (the next one), else
 * the head of the queue, else the queue page.
 */
async function nextAfter(deps: ConsoleDeps, position: number | undefined): Promise<string> {
  const next =
    (position !== undefined
      ? (await deps.matching.candidates({ limit: 1, offset: position })).items[0]
      : undefined) ?? (await deps.matching.candidates({ limit: 1, offset: 0 })).items[0];
  return next ? `/console/review/${next.row.id}` : "/console/review";
}

/** "Will X? ↔ Will Y?" for a flash message. */
function pairName(detail: MatchDetail): string {
  return `${detail.a?.title ?? detail.row.market_a} ↔ ${detail.b?.title ?? detail.row.market_b}`;
}

/** A refused decision as the message to show (field errors of the API spelled out). */
function refusal(error: AppError): Flash {
  const fields = (error.details as { fields?: Record<string, string> } | undefined)?.fields;
  const detail = fields
    ? Object.entries(fields)
        .map(([name, message]) => `${name.replace(/^(body|query|path)\./, "")} ${message}`)
        .join("; ")
    : "";
  return { kind: "error", text: detail ? `Not saved: ${detail}.` : `Not saved: ${messageOf(error)}` };
}

// --- Pairing by hand -----------------------------------------------------------------------------

interface PairForm {
  queries: Record<(typeof PAIR_VENUES)[number], string>;
  picked: { a: string; b: string };
  relation: string;
  polarity: string;
  note: string;
}

function pairFormOf(source: FormBody | Record<string, unknown>): PairForm {
  const get = (name: string) => {
    const value = source[name];
    return typeof value === "string"
      ? value.trim()
      : Array.isArray(value)
        ? String(value[0] ?? "").trim()
        : "";
  };
  return {
    queries: { polymarket: get("q_polymarket"), kalshi: get("q_kalshi") },
    picked: { a: get("market_a"), b: get("market_b") },
    relation: get("relation") || "identity",
    polarity: get("polarity"),
    note: get("note"),
  };
}

function resultsTable(
  venue: (typeof PAIR_VENUES)[number],
  side: "a" | "b",
  query: string,
  found: FoundMarket[],
  picked: string,
): SafeHtml {
  if (!query) return html`<p class="muted">Search ${venueName(venue)} above.</p>`;
  if (found.length === 0)
    return html`<p class="muted">No open or closed ${venueName(venue)} market matches “${query}”.</p>`;
  return html`<table class="responsive" data-testid="results-${venue}">
    <thead><tr><th class="num">Pick</th><th>Market</th><th>Closes</th><th class="num">24 h volume</th></tr></thead>
    <tbody>
      ${found.map((m, i) => {
        const id = `pick-${side}-${i}`;
        return html`<tr>
          <td data-label="Pick" class="num"><input type="radio" name="market_${side}" id="${id}" value="${m.id}" required ${m.id === picked ? html`checked` : ""}></td>
          <td data-label="Market"><label for="${id}">${m.question || m.title}</label>
            ${m.event_title ? html`<div class="muted">${m.event_title}</div>` : ""}<div>${shortId(m.id)}</div></td>
          <td data-label="Closes">${time(m.close_time)}</td>
          <td data-label="24 h volume" class="num">${whole(m.volume_24h)}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

async function pairPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  form: PairForm,
  status = 200,
  flash: Flash[] = [],
): Promise<FastifyReply> {
  const [foundA, foundB] = await Promise.all(
    PAIR_VENUES.map((venue) =>
      form.queries[venue] ? deps.matching.searchMarkets(venue, form.queries[venue], SEARCH_LIMIT) : [],
    ),
  );
  const searched = Boolean(form.queries.polymarket || form.queries.kalshi);
  return render(
    request,
    reply,
    {
      title: "Pair two markets by hand",
      section: "review",
      flash,
      body: html`<p><a href="/console/review">Back to the queue</a></p>
        <h1>Pair two markets by hand</h1>
        <p class="muted">Search each venue, pick one market of each and say how they relate. The pair is
          stored verified with confidence 1 (a pair the matcher already proposed is verified instead),
          and the matcher never changes your decision.</p>
        <form method="get" action="/console/review/pair" class="card" role="search">
          <div class="grid2">
            ${field({ name: "q_polymarket", label: "Search Polymarket", type: "search", value: form.queries.polymarket })}
            ${field({ name: "q_kalshi", label: "Search Kalshi", type: "search", value: form.queries.kalshi })}
          </div>
          <div class="actions"><button type="submit" class="secondary">Search</button></div>
        </form>
        ${
          searched
            ? html`<form method="post" action="/console/review/pair" class="stack">
          ${csrfField(user)}
          <input type="hidden" name="q_polymarket" value="${form.queries.polymarket}">
          <input type="hidden" name="q_kalshi" value="${form.queries.kalshi}">
          <div class="grid2">
            <section aria-labelledby="found-a"><h2 id="found-a">Market A: Polymarket</h2>
              ${resultsTable("polymarket", "a", form.queries.polymarket, foundA ?? [], form.picked.a)}</section>
            <section aria-labelledby="found-b"><h2 id="found-b">Market B: Kalshi</h2>
              ${resultsTable("kalshi", "b", form.queries.kalshi, foundB ?? [], form.picked.b)}</section>
          </div>
          <div class="card stack">
            <h2>How they relate</h2>
            <div class="field"><label for="pair-relation">Relation (market A is … of market B)</label>
              <select id="pair-relation" name="relation">${options(RELATIONS, RELATION_WORDS, form.relation)}</select></div>
            <div class="field"><label for="pair-polarity">Polarity</label>
              <select id="pair-polarity" name="polarity">
                <option value="">As the relation implies</option>
                ${options(POLARITIES, POLARITY_WORDS, form.polarity)}
              </select></div>
            <div class="field"><label for="pair-note">Note (optional)</label>
              <input type="text" id="pair-note" name="note" maxlength="1000" value="${form.note}"></div>
            <div class="actions"><button type="submit">Create a verified match</button></div>
          </div>
        </form>`
            : ""
        }`,
    },
    status,
  );
}

// --- Routes ----------------------------------------------------------------------------------------

export function registerReviewPages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get<{ Querystring: { page?: string } }>("/review", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    const requested = Number.parseInt(request.query.page ?? "1", 10);
    const page = Number.isFinite(requested) && requested > 0 ? Math.min(requested, 100_000) : 1;
    const offset = (page - 1) * PAGE_SIZE;
    const { items, total } = await deps.matching.candidates({ limit: PAGE_SIZE, offset });
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    return render(request, reply, {
      title: "Match review",
      section: "review",
      body: html`<h1>Match review</h1>
        <p class="muted">${num(total)} candidate ${total === 1 ? "pair waits" : "pairs wait"} for an operator,
          the most consequential first: by the 24-hour volume plus liquidity (“weight”, in each venue's
          unit) of the thinner of the two markets.</p>
        <div class="actions"><a class="button secondary" href="/console/review/pair">Pair two markets by hand</a>
          ${items.length > 0 ? html`<span class="muted"><kbd>j</kbd> opens the first candidate</span>` : ""}</div>
        ${
          items.length === 0
            ? html`<div class="card"><p>No candidate waits for review${page > 1 ? " on this page" : ""}.</p></div>`
            : html`<table class="responsive" data-testid="queue">
          <thead><tr><th class="num">#</th><th>Market A</th><th>Market B</th><th>Relation</th>
            <th class="num">Confidence</th><th class="num">Blockers</th><th class="num">Review</th></tr></thead>
          <tbody>${items.map((item, i) => queueRow(item, offset + i, i === 0))}</tbody>
        </table>`
        }
        ${
          pages > 1
            ? html`<nav class="actions" aria-label="Pages">
          ${page > 1 ? html`<a href="/console/review?page=${page - 1}" rel="prev">Previous page</a>` : ""}
          <span>Page ${page} of ${pages}</span>
          ${page < pages ? html`<a href="/console/review?page=${page + 1}" rel="next">Next page</a>` : ""}
        </nav>`
            : ""
        }`,
    });
  });

  app.get<{ Querystring: Record<string, string> }>("/review/pair", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    return pairPage(request, reply, deps, user, pairFormOf(request.query));
  });

  app.post("/review/pair", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    const form = pairFormOf(formOf(request));
    const problems: string[] = [];
    if (!form.picked.a) problems.push("pick a Polymarket market");
    if (!form.picked.b) problems.push("pick a Kalshi market");
    if (!isRelation(form.relation)) problems.push("choose a relation");
    if (form.polarity && !isPolarity(form.polarity)) problems.push("choose a polarity");
    if (problems.length > 0 || !isRelation(form.relation)) {
      return pairPage(request, reply, deps, user, form, 400, [
        { kind: "error", text: `Not saved: ${problems.join(", ")}.` },
      ]);
    }
    try {
      const { match, created } = await deps.matching.create(
        {
          market_ids: [form.picked.a, form.picked.b],
          relation: form.relation,
          ...(isPolarity(form.polarity) ? { polarity: form.polarity } : {}),
          ...(form.note ? { note: form.note } : {}),
        },
        { accountId: user.account.id, keyId: null },
      );
      return redirect(request, reply, `/console/review/${match.row.id}`, {
        kind: "ok",
        text: `${created ? "Paired and verified" : "That pair existed; now verified"}: ${pairName(match)} (${match.row.relation}, ${match.row.polarity}).`,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return pairPage(request, reply, deps, user, form, error.status, [refusal(error)]);
    }
  });

  app.get<{ Params: { id: string } }>("/review/:id", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    return reviewPage(request, reply, deps, user, request.params.id);
  });

  app.post<{ Params: { id: string } }>("/review/:id/verify", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    const id = request.params.id;
    const form = formOf(request);
    const relation = text(form, "relation");
    const polarity = text(form, "polarity");
    const note = text(form, "note");
    const back = `/console/review/${encodeURIComponent(id)}`;
    if ((relation && !isRelation(relation)) || (polarity && !isPolarity(polarity))) {
      return redirect(request, reply, back, {
        kind: "error",
        text: "Not saved: choose a relation and a polarity.",
      });
    }
    const position = await deps.matching.candidatePosition(id);
    try {
      const done = await deps.matching.verify(
        id,
        {
          ...(relation && isRelation(relation) ? { relation } : {}),
          ...(polarity && isPolarity(polarity) ? { polarity } : {}),
          ...(note ? { note } : {}),
        },
        { accountId: user.account.id, keyId: null },
      );
      return redirect(request, reply, await nextAfter(deps, position), {
        kind: "ok",
        text: `Verified: ${pairName(done)} (${done.row.relation}, ${done.row.polarity}).`,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status === 404) throw error;
      return redirect(request, reply, back, refusal(error));
    }
  });

  app.post<{ Params: { id: string } }>("/review/:id/reject", async (request, reply) => {
    const user = requireOperator(request, reply);
    if (!user) return reply;
    const id = request.params.id;
    const form = formOf(request);
    const reason = text(form, "reason");
    const note = text(form, "note");
    const back = `/console/review/${encodeURIComponent(id)}`;
    if (!isReason(reason)) {
      return redirect(request, reply, back, {
        kind: "error",
        text: "Not saved: choose the reason for rejecting.",
      });
    }
    const position = await deps.matching.candidatePosition(id);
    try {
      const done = await deps.matching.reject(
        id,
        { reason, ...(note ? { note } : {}) },
        { accountId: user.account.id, keyId: null },
      );
      return redirect(request, reply, await nextAfter(deps, position), {
        kind: "ok",
        text: `Rejected (${reason}): ${pairName(done)}.`,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status === 404) throw error;
      return redirect(request, reply, back, refusal(error));
    }
  });
}
