/**
 * The operators' match review desk through its routes: the queue ordered by the thinner market's
 * weight, a pair side by side with the matcher's reading marked in both rules, verify (with a
 * corrected relation and polarity) and reject (with a reason) as the API then shows them, pairing by
 * hand, and the desk hidden from everyone who is not an operator. On SQLite and PostgreSQL (the
 * queue's order and positions are SQL of their own).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { highlight } from "../../src/console/review-highlight";
import { extractFeatures } from "../../src/matching/features";
import { call, keys, type MatchingTestApp, matchingApp, pairRow, UNSURE } from "../matching/setup";
import { STORE_BACKENDS } from "../support/backends";
import { testMarket } from "../support/fake-venue";
import { ConsoleClient } from "./support";

let address = 0;
const fresh = (t: MatchingTestApp) => new ConsoleClient(t.app, { "x-forwarded-for": `10.8.0.${++address}` });

const RULES_A =
  'This market resolves to "Yes" if the Binance BTC/USDT 1 minute candle for 12:00 ET on December 31, 2026 ' +
  'has a final close price at or above $150,000. Otherwise, it resolves to "No". If the market is cancelled, ' +
  "it resolves 50-50. <b>Bold</b> claims do not count. If no candle is published by January 5, 2027, the " +
  "market resolves No.";
const RULES_B =
  "If the price of Bitcoin according to Coinbase is above 150,000 on Dec 31, 2026 at 5:00 PM ET, the market " +
  "resolves to Yes. If the reading is postponed, the market resolves to No.";

/** Markets with weights (24 h volume + liquidity, micro-units) that make the queue's order plain. */
function market(
  venue: "polymarket" | "kalshi",
  key: string,
  weight: number,
  over: Record<string, unknown> = {},
) {
  return testMarket(venue, key, { volume24h: weight / 2, liquidity: weight / 2, ...over });
}

describe.each(STORE_BACKENDS)("console match review desk on %s", (store) => {
  let t: MatchingTestApp;
  let operator: ConsoleClient;
  let operatorAccount: string;
  let read: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await matchingApp({ store });
    t.polymarket.set(
      market("polymarket", "P1", 1e9, {
        title: "Bitcoin above $150k on Dec 31?",
        question: "Will Bitcoin be above $150k on December 31, 2026?",
        rules: RULES_A,
        settlementSource: "Binance",
      }),
      market("polymarket", "P2", 5e9),
      market("polymarket", "P3", 0.1e9),
      // The heaviest market of all, paired with a thin one: its pair is as consequential as the thin side.
      market("polymarket", "P4", 50e9),
    );
    t.kalshi.set(
      market("kalshi", "K1", 2e9, {
        title: "Bitcoin above 150,000 at year end",
        question: "Bitcoin above 150,000 on Dec 31, 2026?",
        rules: RULES_B,
        settlementSource: "Coinbase",
      }),
      market("kalshi", "K2", 4e9),
      market("kalshi", "K3", 0.1e9),
      market("kalshi", "K4", 0.2e9),
    );
    for (const n of [1, 2, 3, 4]) {
      t.matcher.script(`polymarket:P${n}`, `kalshi:K${n}`, {
        ...UNSURE,
        reasons: [`scripted reason ${n}`],
        blockers: n === 1 ? ["Placeholder rules on one side"] : [],
        caveats: n === 1 ? ["Cancellation handled on one side only"] : [],
      });
    }
    await t.sync();
    for (const n of [1, 2, 3, 4])
      ids[`p${n}k${n}`] = (await pairRow(t, `polymarket:P${n}`, `kalshi:K${n}`))!.id;
    ({ read } = await keys(t.app));
    operator = fresh(t);
    const email = await operator.signUp();
    operatorAccount = (await t.services.accounts.getByEmail(email))!.id;
    await t.services.accounts.update(operatorAccount, { operator: true });
  });
  afterAll(() => t?.close());

  const apiMatch = async (id: string) => {
    const response = await call(t.app, read, "GET", `/v1/matches/${id}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data as Record<string, unknown>;
  };

  it("queues candidates by the weight of the thinner market, each row a link to its review", async () => {
    const page = await operator.get("/console/review");
    expect(page.statusCode).toBe(200);
    const order = [...page.body.matchAll(/data-testid="candidate" data-id="([^"]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([ids["p2k2"], ids["p1k1"], ids["p4k4"], ids["p3k3"]]);
    for (const id of order) expect(page.body).toContain(`href="/console/review/${id}"`);
    expect(page.body).toContain('<table class="responsive" data-testid="queue">');
    // Every cell of the table is labelled for the phone layout.
    const table = /<tbody>([\s\S]*?)<\/tbody>/.exec(page.body)![1]!;
    expect(table.match(/<td(?![^>]*data-label)/g)).toBeNull();
    expect(page.body).toMatch(/<a href="\/console\/review" aria-current="page">Match review<\/a>/);
    expect(page.body).toContain("4 candidate pairs wait");
    // A page past the end says so rather than failing.
    expect((await operator.get("/console/review?page=2")).body).toContain(
      "No candidate waits for review on this page",
    );
  });

  it("shows both markets side by side with the phrases the matcher read marked, escaped", async () => {
    const page = await operator.get(`/console/review/${ids["p1k1"]}`);
    expect(page.statusCode).toBe(200);
    const body = page.body;
    expect(body).toContain('class="grid2"');
    const a = /data-testid="market-a">([\s\S]*?)<\/section>/.exec(body)![1]!;
    const b = /data-testid="market-b">([\s\S]*?)<\/section>/.exec(body)![1]!;
    expect(a).toContain("Bitcoin above $150k on Dec 31?");
    expect(b).toContain("Bitcoin above 150,000 at year end");
    const rulesA = /data-testid="rules">([\s\S]*?)<\/div>/.exec(a)![1]!;
    const rulesB = /data-testid="rules">([\s\S]*?)<\/div>/.exec(b)![1]!;
    // The threshold with its comparator, the date, the time, the source and the clauses.
    expect(rulesA).toMatch(
      /<mark data-kind="threshold" title="Condition: ≥ \$150000[^"]*"><b>at or above \$150,000<\/b><\/mark>/,
    );
    expect(rulesA).toMatch(
      /<mark data-kind="date" title="Date: 2026-12-31[^"]*"><b>December 31, 2026<\/b><\/mark>/,
    );
    expect(rulesA).toMatch(/<mark data-kind="date" title="Time of day[^"]*"><b>12:00 ET<\/b><\/mark>/);
    expect(rulesA).toMatch(
      /<mark data-kind="source" title="Source \(index\): binance"><b>Binance<\/b><\/mark>/,
    );
    expect(rulesA).toMatch(
      /<mark data-kind="clause" title="A cancellation settles: 50-50">If the market is cancelled, it resolves 50-50\.<\/mark>/,
    );
    // A phrase inside a clause is marked inside the clause's mark.
    expect(rulesA).toMatch(
      /<mark data-kind="clause" title="A postponement settles: no">If no candle is published <mark data-kind="date"[^>]*><b>by January 5, 2027<\/b><\/mark>, the market resolves No\.<\/mark>/,
    );
    expect(rulesB).toMatch(/<mark data-kind="threshold"[^>]*><b>above 150,000<\/b><\/mark>/);
    expect(rulesB).toMatch(/<mark data-kind="date"[^>]*><b>Dec 31, 2026<\/b><\/mark>/);
    expect(rulesB).toMatch(/<mark data-kind="source"[^>]*><b>Coinbase<\/b><\/mark>/);
    expect(rulesB).toMatch(/<mark data-kind="clause" title="A postponement settles: no">/);
    // Venue text is escaped, never markup.
    expect(rulesA).toContain("&lt;b&gt;Bold&lt;/b&gt;");
    expect(body).not.toContain("<b>Bold</b>");
    // Close times, venue links, relation, polarity, confidence, reasons, blockers and caveats.
    expect(a).toContain('<time datetime="2026-12-31T23:59:59.000Z">');
    expect(a).toContain('href="https://example.invalid/P1" rel="noopener noreferrer"');
    expect(b).toContain('href="https://example.invalid/K1" rel="noopener noreferrer"');
    expect(body).toContain('<strong data-testid="relation">identity</strong>');
    expect(body).toContain('<strong data-testid="polarity">same</strong>');
    expect(body).toContain("confidence <strong>60%</strong>");
    expect(body).toContain("scripted reason 1");
    expect(body).toContain("Placeholder rules on one side");
    expect(body).toContain("Cancellation handled on one side only");
    // The actions: forms with the CSRF field, the reason codes the API accepts, the shortcuts.
    expect(
      body.match(/<form method="post" action="\/console\/review\/[^"]+\/(verify|reject)"/g),
    ).toHaveLength(2);
    const verifyForm = /action="\/console\/review\/[^"]+\/verify"[\s\S]*?<\/form>/.exec(body)![0];
    const rejectForm = /action="\/console\/review\/[^"]+\/reject"[\s\S]*?<\/form>/.exec(body)![0];
    for (const form of [verifyForm, rejectForm])
      expect(form).toContain(`name="_csrf" value="${operator.csrf}"`);
    for (const reason of ["different_contract", "settlement_source", "threshold", "tie_void_rules", "other"])
      expect(rejectForm).toContain(`<option value="${reason}">`);
    expect(verifyForm).toContain('data-key="v"');
    expect(rejectForm).toMatch(/<select id="reject-reason" name="reason" required data-key="r"/);
    expect(body).toContain("<kbd>v</kbd> verify");
    // j/k: the neighbours in the queue (p2k2 before it, p4k4 after it).
    expect(body).toContain(`href="/console/review/${ids["p4k4"]}" data-key="j" aria-keyshortcuts="j"`);
    expect(body).toContain(`href="/console/review/${ids["p2k2"]}" data-key="k" aria-keyshortcuts="k"`);
  });

  it("verifies with a corrected relation and polarity, then moves on to the next candidate", async () => {
    await operator.get(`/console/review/${ids["p4k4"]}`);
    const done = await operator.post(`/console/review/${ids["p4k4"]}/verify`, {
      relation: "complement",
      polarity: "inverted",
      note: "Kalshi asks the opposite",
    });
    expect(done.statusCode).toBe(303);
    // p4k4 was third; the third is now p3k3.
    expect(done.headers.location).toBe(`/console/review/${ids["p3k3"]}`);
    const next = await operator.follow(done);
    expect(next.body).toMatch(/class="flash ok" role="status">Verified: .*\(complement, inverted\)\./);
    const match = await apiMatch(ids["p4k4"]!);
    expect(match).toMatchObject({
      status: "verified",
      relation: "complement",
      polarity: "inverted",
      decided_by: "admin",
      decided_by_account: operatorAccount,
      decided_by_key: null,
      status_note: "Kalshi asks the opposite",
      curated: true,
    });
    // Out of the queue.
    expect((await operator.get("/console/review")).body).not.toContain(`data-id="${ids["p4k4"]}"`);
  });

  it("refuses a polarity the relation cannot have, and shows why", async () => {
    await operator.get(`/console/review/${ids["p2k2"]}`);
    const refused = await operator.post(`/console/review/${ids["p2k2"]}/verify`, {
      relation: "complement",
      polarity: "same",
    });
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe(`/console/review/${ids["p2k2"]}`);
    expect((await operator.follow(refused)).body).toContain(
      "polarity must be inverted for a complement pair",
    );
    expect(await apiMatch(ids["p2k2"]!)).toMatchObject({ status: "candidate", relation: "identity" });
  });

  it("rejects with a reason code (and asks for one when it is missing)", async () => {
    await operator.get(`/console/review/${ids["p3k3"]}`);
    const missing = await operator.post(`/console/review/${ids["p3k3"]}/reject`, { reason: "" });
    expect(missing.headers.location).toBe(`/console/review/${ids["p3k3"]}`);
    expect((await operator.follow(missing)).body).toContain("choose the reason for rejecting");
    expect(await apiMatch(ids["p3k3"]!)).toMatchObject({ status: "candidate" });

    const done = await operator.post(`/console/review/${ids["p3k3"]}/reject`, {
      reason: "threshold",
      note: "Different strikes",
    });
    expect(done.statusCode).toBe(303);
    // The last candidate was decided: back to the head of the queue.
    expect(done.headers.location).toBe(`/console/review/${ids["p2k2"]}`);
    expect((await operator.follow(done)).body).toContain("Rejected (threshold)");
    expect(await apiMatch(ids["p3k3"]!)).toMatchObject({
      status: "rejected",
      status_reason: "threshold",
      status_note: "Different strikes",
      decided_by_account: operatorAccount,
      decided_by_key: null,
    });
  });

  it("pairs two markets by hand into a verified match", async () => {
    const search = await operator.get("/console/review/pair?q_polymarket=P3&q_kalshi=K4");
    expect(search.statusCode).toBe(200);
    expect(search.body).toContain('data-testid="results-polymarket"');
    expect(search.body).toContain('value="polymarket:P3"');
    expect(search.body).toContain('value="kalshi:K4"');
    expect(search.body).not.toContain('value="kalshi:K1"');
    const table = /data-testid="results-kalshi">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(search.body)![1]!;
    expect(table.match(/<td(?![^>]*data-label)/g)).toBeNull();

    const incomplete = await operator.post("/console/review/pair", {
      q_polymarket: "P3",
      q_kalshi: "K4",
      market_a: "polymarket:P3",
      relation: "overlap",
    });
    expect(incomplete.statusCode).toBe(400);
    expect(incomplete.body).toContain("pick a Kalshi market");

    const made = await operator.post("/console/review/pair", {
      q_polymarket: "P3",
      q_kalshi: "K4",
      market_a: "polymarket:P3",
      market_b: "kalshi:K4",
      relation: "overlap",
      polarity: "",
      note: "by hand",
    });
    expect(made.statusCode).toBe(303);
    const id = /^\/console\/review\/(mat_[^/]+)$/.exec(String(made.headers.location))![1]!;
    expect((await operator.follow(made)).body).toContain("Paired and verified");
    expect(await apiMatch(id)).toMatchObject({
      status: "verified",
      relation: "overlap",
      polarity: "same",
      confidence: 1,
      decided_by_account: operatorAccount,
      market_a: { id: "polymarket:P3" },
      market_b: { id: "kalshi:K4" },
    });
  });

  it("does not exist for a non-operator: no link, a 404 for every page and action", async () => {
    const other = fresh(t);
    await other.signUp();
    const sessions = await other.get("/console/sessions");
    expect(sessions.statusCode).toBe(200);
    expect(sessions.body).not.toContain("/console/review");
    expect(sessions.body).not.toContain("Match review");
    for (const url of [
      "/console/review",
      `/console/review/${ids["p2k2"]}`,
      "/console/review/pair?q_kalshi=K1",
    ]) {
      const page = await other.get(url);
      expect(page.statusCode, url).toBe(404);
      expect(page.body).toContain("Not found");
      expect(page.body).not.toContain("scripted reason");
    }
    await other.get("/console/sessions");
    expect((await other.post(`/console/review/${ids["p2k2"]}/verify`, {})).statusCode).toBe(404);
    expect((await other.post(`/console/review/${ids["p2k2"]}/reject`, { reason: "other" })).statusCode).toBe(
      404,
    );
    expect(
      (
        await other.post("/console/review/pair", {
          market_a: "polymarket:P2",
          market_b: "kalshi:K1",
          relation: "identity",
        })
      ).statusCode,
    ).toBe(404);
    expect(await apiMatch(ids["p2k2"]!)).toMatchObject({ status: "candidate" });
    // Signed out, the desk asks for a sign-in first.
    const signedOut = await fresh(t).get("/console/review");
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe("/console/signin?next=%2Fconsole%2Freview");
  });

  it("refuses a decision without the form's token, and the API still refuses a non-operator's key", async () => {
    await operator.get(`/console/review/${ids["p2k2"]}`);
    expect((await operator.post(`/console/review/${ids["p2k2"]}/verify`, { _csrf: "" })).statusCode).toBe(
      403,
    );
    const { admin } = await keys(t.app);
    const refused = await call(t.app, admin, "POST", `/v1/matches/${ids["p2k2"]}/verify`, {});
    expect(refused.statusCode).toBe(403);
    expect(await apiMatch(ids["p2k2"]!)).toMatchObject({ status: "candidate" });
  });
});

describe("marking what the matcher read", () => {
  const read = (rules: string, question = "Will it be above $100k by June 30, 2026?") =>
    extractFeatures({
      id: "polymarket:x",
      venue: "polymarket",
      question,
      eventTitle: null,
      rules,
      settlementSource: null,
      closeTime: "2026-06-30T23:59:00Z",
      yesLabel: "Yes",
      noLabel: "No",
    });

  it("escapes venue text around and inside marks, and in the marks' notes", () => {
    const rules =
      'Resolves Yes if the price is above $100k"><script>x</script> by June 30, 2026 & not <i>before</i>.';
    const out = highlight(rules, read(rules), { clauses: true }).value;
    expect(out).not.toMatch(/<script|<i>/);
    expect(out).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(out).toContain("&amp; not &lt;i&gt;before&lt;/i&gt;");
    expect(out).toMatch(
      /<mark data-kind="threshold" title="Condition: &gt; \$100000[^"]*"><b>above \$100k<\/b><\/mark>/,
    );
    // Nothing but <mark>, <b>, <br> and <wbr> is markup.
    expect(out.replace(/<\/?(mark|b|br|wbr)\b[^>]*>/g, "")).not.toMatch(/[<>]/);
  });

  it("keeps long runs wrappable without splitting a character, and marks only what the matcher read", () => {
    const hash = `0x${"ab".repeat(30)}😀${"c".repeat(30)}`;
    const rules = `Source hash ${hash}. Resolves Yes above $100k by June 30, 2026.`;
    const out = highlight(rules, read(rules)).value;
    expect(out).toContain("<wbr>");
    expect(out.replace(/<wbr>/g, "")).toContain(hash);
    expect(out).toContain("😀");
    // Past the matcher's input limit nothing is marked (it never read that far).
    const long = `${"x ".repeat(9000)}above $100k by June 30, 2026`;
    expect(highlight(long, read(long)).value).not.toContain("<mark");
  });
});
