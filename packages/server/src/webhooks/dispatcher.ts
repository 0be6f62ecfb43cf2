/**
 * The webhook dispatcher: from the durable outbox to the receivers, surviving crashes.
 *
 * 1. Fan-out: reads the outbox after its stored cursor and, in ONE transaction with the cursor's
 *    advance, writes one delivery per (event, subscribed webhook). On PostgreSQL the cursor row is
 *    locked for that transaction, so instances never fan out the same events twice (and the
 *    (webhook, event) unique index would refuse a duplicate anyway).
 * 2. Dispatch: a webhook's queue is leased to one dispatcher at a time (a conditional update on
 *    the webhook row, so only one wins). Its worker takes a run of the oldest due deliveries and
 *    sends them one by one, in the order they were recorded, stopping at the first failure or when
 *    the run's time is up (at most 250 ms); then it records every attempt and takes the next run in
 *    one transaction, shared with the other webhooks' runs that ended at the same moment. A
 *    dispatcher killed mid-run leaves a lease that expires; the unrecorded deliveries are sent again
 *    with the same delivery ids (receivers deduplicate on them). A failing endpoint holds back only
 *    its own queue.
 * 3. Retries (spec 6.4): after a failure the next attempt is 1 min, 5 min, 30 min, 2 h, 12 h later
 *    (plus up to 5 % jitter, never earlier; a 429/503 Retry-After can only push it later). The
 *    sixth failure in a row marks the webhook `failed`: it receives nothing until re-enabled, and
 *    its pending deliveries wait, then resume with a fresh round of six.
 * 4. Fairness between accounts: at most `accountConcurrency` of the `concurrency` attempts in
 *    flight belong to one account's webhooks (claims leave out accounts at their cap, so their
 *    backlog does not crowd out others'), and an endpoint that keeps timing out is held back by its
 *    circuit breaker (`breaker.ts`): one tenant's hanging receivers cannot hold every slot for the
 *    5 s of each timeout. Both only delay attempts; neither records a failure.
 */
import type { EventCursor, Outbox, RawRecordedEvent } from "../events/outbox";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import { TransactionBatcher } from "../infra/db/batcher";
import type { Db, Dialect, Trx } from "../infra/db/store";
import { newId } from "../infra/ids";
import type { Logger } from "../infra/log";
import type { SecretBox } from "../infra/secretbox";
import { type BreakerOptions, DEFAULT_BREAKER, EndpointBreakers, endpointOf } from "./breaker";
import type { AttemptRow, DeliveryRow, DueDelivery, QueuedDelivery, WebhookRow } from "./repo";
import * as repo from "./repo";
import { sendWebhook } from "./sender";
import { deliveryHeaders, type SigningKeys, signingKeys } from "./signing";
import type { LookupFn } from "./ssrf";

/** Delay before attempts 2..6, after the previous failure (spec 6.4). */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000] as const;
export const MAX_ATTEMPTS = 6;
const CURSOR = "webhooks";
/** How long a webhook's row and secret are reused from memory (updates here forget it at once). */
const WEBHOOK_CACHE_MS = 1_000;
/**
 * A run of deliveries is recorded after at most this long, however many were sent. Runs end on the
 * clock's multiples of it (or of a third of the lease, if shorter), so the runs of many webhooks
 * end together and their records share one transaction.
 */
const RUN_RECORD_MS = 250;
/** How long a finished run's record may wait for the runs still being sent, to share their commit. */
const RECORD_GROUP_MS = 5;

/** One attempt of a run, waiting to be recorded. */
interface Sent {
  delivery: QueuedDelivery;
  outcome: SendOutcome;
  /** The request headers as signed for this attempt (kept with it for the delivery log). */
  headers: Record<string, string>;
  at: string;
}

interface CachedWebhook {
  row: WebhookRow;
  secret: string;
  keys: SigningKeys;
  at: number;
}

export interface SendInput {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  responseTimeMs: number;
  error: string | null;
  retryAfterSeconds: number | null;
  /** No complete answer within the delivery timeout (what the endpoint's circuit breaker counts). */
  timedOut?: boolean;
}

export interface DispatcherOptions {
  /** Attempts in flight at once over all webhooks. */
  concurrency: number;
  /** Attempts in flight at once for the webhooks of one account. */
  accountConcurrency: number;
  /** When an endpoint that keeps timing out is held back, and for how long (see breaker.ts). */
  breaker: BreakerOptions;
  allowPrivateNetworks: boolean;
  /** Loopback receivers allowed, over http too (`crossbook demo`). */
  allowLoopback?: boolean;
  /** How long a claimed attempt is ours before another dispatcher may take it over. */
  leaseMs: number;
  /** How often the outbox is checked for new events when idle. */
  pollIntervalMs: number;
  /** Events fanned out per transaction. */
  fanOutBatch: number;
  /** Fraction of a retry delay added at random (0.05 = up to 5 % later). */
  jitter: number;
  /** Deliveries of one webhook claimed and sent as one run. */
  batchSize: number;
  /** Tests replace the HTTPS sender and the DNS lookup. */
  send?: (input: SendInput) => Promise<SendOutcome>;
  lookup?: LookupFn;
}

const DEFAULTS: DispatcherOptions = {
  concurrency: 64,
  accountConcurrency: 8,
  breaker: DEFAULT_BREAKER,
  allowPrivateNetworks: false,
  leaseMs: 30_000,
  pollIntervalMs: 50,
  fanOutBatch: 500,
  jitter: 0.05,
  // Enough for RUN_RECORD_MS of a fast receiver: a deep queue's runs end by time, together.
  batchSize: 256,
};

export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #owner = newId("req");
  /** Webhook ids with an attempt in flight here. */
  readonly #busy = new Set<string>();
  /** Attempts in flight here per account. */
  readonly #accountLoad = new Map<string, number>();
  readonly #breakers: EndpointBreakers;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;
  #stopped = true;
  #inFlight = new Set<Promise<void>>();
  /** Set while runOnce waits: workers keep going although the loop is stopped. */
  #draining = false;
  readonly #webhooks = new Map<string, CachedWebhook>();
  readonly #batcher: TransactionBatcher;
  /** Workers sending a run right now. */
  #sending = 0;
  /** Records of finished runs waiting (briefly) for the runs still being sent. */
  #held: Array<() => void> = [];
  #heldTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly outbox: Outbox,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: Partial<DispatcherOptions> = {},
  ) {
    this.#options = { ...DEFAULTS, ...options };
    this.#batcher = new TransactionBatcher(db);
    this.#breakers = new EndpointBreakers(this.#options.breaker);
  }

  start(): void {
    this.#stopped = false;
    const loop = () => {
      if (this.#stopped) return;
      this.kick();
      this.#timer = setTimeout(loop, this.#options.pollIntervalMs);
      this.#timer.unref();
    };
    loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Run a round soon (new events, a re-enabled webhook, a finished attempt). */
  kick(): void {
    if (this.#stopped) return; // tests drive a stopped dispatcher with runOnce()
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#round()
      .catch((error) => this.log.warn({ err: error }, "webhook dispatch round failed"))
      .finally(() => {
        this.#running = false;
        if (this.#again && !this.#stopped) {
          this.#again = false;
          this.kick();
        }
      });
  }

  async #round(): Promise<void> {
    while ((await this.fanOut()) > 0) {}
    await this.#startAllDue();
  }

  /**
   * One test/CLI-friendly step: fan out everything recorded, then attempt every due delivery and
   * wait for those attempts. Returns the number of attempts made.
   */
  async runOnce(): Promise<number> {
    while ((await this.fanOut()) > 0) {}
    this.#draining = true;
    try {
      const started = await this.#startAllDue();
      await Promise.allSettled([...this.#inFlight]);
      return started;
    } finally {
      this.#draining = false;
    }
  }

  /** Resolves when no attempt is in flight. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0 || this.#running) {
      await Promise.allSettled([...this.#inFlight]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // --- fan-out -------------------------------------------------------------------------------------

  /** Fans out one batch of outbox events into deliveries; returns how many events it read. */
  async fanOut(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const nowIso = isoNow(this.clock);
      const cursor = await repo.lockCursor(trx, this.dialect, CURSOR, nowIso);
      const events = await this.outbox.readRawAfter(trx, cursor, this.#options.fanOutBatch);
      if (events.length === 0) return 0;
      const webhooks = await repo.allWebhooks(trx);
      const subscribed = webhooks.map((w) => ({ row: w, events: new Set<string>(JSON.parse(w.events)) }));
      const deliveries: repo.NewDelivery[] = [];
      for (const event of events) {
        for (const { row, events: types } of subscribed) {
          if (!types.has(event.type) || !receives(row, event)) continue;
          const id = newId("whd");
          deliveries.push({
            id,
            webhook_id: row.id,
            event_id: event.id,
            event_type: event.type,
            // The stored payload is forwarded as is: the body is built around its JSON text.
            body: `{"id":"${id}","type":"${event.type}","timestamp":"${event.created_at}","data":${event.dataJson}}`,
          });
        }
      }
      // Many rows per statement (in recording order, so `seq` keeps the events' order).
      for (let k = 0; k < deliveries.length; k += 200) {
        await repo.insertDeliveries(trx, deliveries.slice(k, k + 200), nowIso);
      }
      const last: EventCursor = events[events.length - 1]!.cursor;
      await repo.saveCursor(trx, CURSOR, last, nowIso);
      return events.length;
    });
  }

  // --- dispatch ------------------------------------------------------------------------------------

  /**
   * Starts a worker for every due webhook there is room for. A claim that had to skip webhooks (an
   * account at its cap, an endpoint held by its breaker) is made again without them, so that they
   * do not take the places of other accounts' deliveries in it.
   */
  async #startAllDue(): Promise<number> {
    let started = 0;
    for (let pass = 0; pass < 4; pass++) {
      const due = await this.#due();
      const outcome = this.#startDue(due);
      started += outcome.started;
      if (!outcome.skipped) break;
    }
    return started;
  }

  async #due(): Promise<DueDelivery[]> {
    const free = this.#options.concurrency - this.#inFlight.size;
    if (free <= 0) return [];
    const now = this.clock.now();
    const fullAccounts: string[] = [];
    for (const [account, load] of this.#accountLoad) {
      if (load >= this.#options.accountConcurrency) fullAccounts.push(account);
    }
    const held = this.#breakers.held(now);
    const exclude = held.length > 0 ? [...this.#busy, ...held] : [...this.#busy];
    return repo.dueDeliveries(this.db, isoFromMs(now), exclude, free, fullAccounts);
  }

  #startDue(due: DueDelivery[]): { started: number; skipped: boolean } {
    let started = 0;
    let skipped = false;
    const now = this.clock.now();
    for (const delivery of due) {
      if (this.#inFlight.size >= this.#options.concurrency) break;
      const webhookId = delivery.webhook_id;
      if (this.#busy.has(webhookId)) continue;
      const account = delivery.account_id;
      const load = this.#accountLoad.get(account) ?? 0;
      if (load >= this.#options.accountConcurrency) {
        skipped = true;
        continue;
      }
      const endpoint = endpointOf(account, delivery.url);
      const admission = this.#breakers.admit(endpoint, webhookId, now);
      if (admission === false) {
        skipped = true;
        continue;
      }
      this.#busy.add(webhookId);
      this.#accountLoad.set(account, load + 1);
      started++;
      const work = this.#work(webhookId, endpoint, admission === "probe")
        .catch((error) => this.log.warn({ err: error, delivery_id: delivery.id }, "webhook attempt failed"))
        .finally(() => {
          this.#busy.delete(webhookId);
          const left = (this.#accountLoad.get(account) ?? 1) - 1;
          if (left > 0) this.#accountLoad.set(account, left);
          else this.#accountLoad.delete(account);
          this.#inFlight.delete(work);
          if (!this.#stopped) this.kick();
        });
      this.#inFlight.add(work);
    }
    return { started, skipped };
  }

  /**
   * One webhook's worker. It claims a run of the webhook's oldest due deliveries (up to
   * `batchSize`, leased together), sends them one by one in order, and stops at the first failure or
   * when the run's time is up (the next multiple of RUN_RECORD_MS, or of a third of the lease: a run
   * never outlives its lease). Then it records every attempt, releases what it did not send (or, on
   * success, renews the lease and takes the next run) in one transaction, which the records of
   * other webhooks' runs ending at the same moment share (see `#together`). A healthy endpoint is
   * fed back to back for a few statements per run instead of per delivery. A crash before the record
   * means those deliveries are sent again (same ids) after the lease.
   *
   * `endpoint` is the webhook's breaker; `probe` says this worker holds its single half-open
   * attempt. Before each attempt the worker checks the breaker: once it is open (this endpoint
   * timed out again, here or in another webhook of the account), the run stops there, unsent and
   * not failed, and waits for the breaker like the rest.
   */
  async #work(id: string, endpoint: string, probe: boolean): Promise<void> {
    let probing = probe;
    try {
      let run = await this.#batcher.run((trx) => this.#claimRun(trx, id, []));
      while (run.length > 0) {
        const webhook = await this.#webhook(id);
        if (webhook?.row.status !== "active") {
          await repo.releaseWebhook(this.db, id, this.#owner);
          return;
        }
        const period = Math.min(RUN_RECORD_MS, this.#options.leaseMs / 3);
        const endsAt = (Math.floor(this.clock.now() / period) + 1) * period;
        const sent: Sent[] = [];
        let held = false;
        this.#sending++;
        try {
          for (const delivery of run) {
            if (!probing && !this.#breakers.allows(endpoint)) {
              held = true;
              break;
            }
            const headers = this.#headers(webhook, delivery.id, delivery.event_type, delivery.body);
            const outcome = await this.#send(webhook, headers, delivery.body);
            this.#breakers.record(endpoint, id, outcome.timedOut === true, this.clock.now(), probing);
            probing = false;
            sent.push({ delivery, outcome, headers, at: isoNow(this.clock) });
            if (!outcome.ok) break;
            if (this.#stopped && !this.#draining) break;
            // Record at least every RUN_RECORD_MS (and well inside the lease): a crash replays little.
            if (this.clock.now() >= endsAt) break;
          }
        } finally {
          this.#sending--;
        }
        const carryOn = !held && !(this.#stopped && !this.#draining);
        const unsent = run.slice(sent.length);
        run = await this.#together((trx) => this.#record(trx, webhook.row, sent, carryOn, unsent));
      }
    } finally {
      // A probe that found nothing to send: the next due delivery may probe instead.
      if (probing) this.#breakers.release(endpoint);
    }
  }

  /**
   * Runs `work` through the group-committed batcher, but first lets the runs still being sent
   * finish (up to RECORD_GROUP_MS), so that the runs ending together are recorded in one
   * transaction: their rows share pages and one commit instead of one commit each.
   */
  #together<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#held.push(() => {
        this.#batcher.run(work).then(resolve, reject);
      });
      if (this.#sending === 0) this.#releaseHeld();
      else this.#heldTimer ??= setTimeout(() => this.#releaseHeld(), RECORD_GROUP_MS);
    });
  }

  /** Hands every held record to the batcher in one turn of the event loop: one transaction. */
  #releaseHeld(): void {
    if (this.#heldTimer) clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
    for (const submit of this.#held.splice(0)) submit();
  }

  /**
   * Leases the webhook's queue and returns its oldest due deliveries, in order, as one run.
   * `unsent` is the rest of the previous run: when our lease on the queue never lapsed, nobody else
   * has touched it, so those deliveries are still pending and lead the run without being read again.
   */
  async #claimRun(trx: Trx, webhookId: string, unsent: QueuedDelivery[]): Promise<QueuedDelivery[]> {
    const now = this.clock.now();
    const nowIso = isoFromMs(now);
    const leaseUntil = isoFromMs(now + this.#options.leaseMs);
    let run: QueuedDelivery[] = [];
    if (unsent.length > 0 && (await repo.renewLease(trx, webhookId, this.#owner, nowIso, leaseUntil))) {
      run = unsent;
    } else if (!(await repo.leaseWebhook(trx, webhookId, this.#owner, nowIso, leaseUntil))) {
      return [];
    }
    const wanted = this.#options.batchSize - run.length;
    if (wanted > 0) {
      const head = await repo.pendingHead(trx, webhookId, wanted, run.at(-1)?.seq);
      for (const delivery of head) {
        // Only a prefix from the head: a delivery waiting for its retry time blocks those behind it.
        if (delivery.next_attempt_at > nowIso) break;
        run.push(delivery);
      }
    }
    if (run.length === 0) await repo.releaseWebhook(trx, webhookId, this.#owner);
    return run;
  }

  /** Records a run's attempts; unless it failed (or we stop), claims and returns the next run. */
  async #record(
    trx: Trx,
    webhook: WebhookRow,
    sent: Sent[],
    carryOn: boolean,
    unsent: QueuedDelivery[],
  ): Promise<QueuedDelivery[]> {
    if (sent.length > 0) {
      await repo.insertAttempts(
        trx,
        // The body stays in the delivery row (the same on every attempt); the headers change.
        sent.map(({ delivery, outcome, headers, at }) =>
          attemptRow(delivery, delivery.attempts + 1, outcome, at, headers, null),
        ),
      );
    }
    const successes = sent.filter((x) => x.outcome.ok);
    if (successes.length > 0) {
      await repo.markDelivered(
        trx,
        successes.map((x) => x.delivery.seq),
        successes.at(-1)!.at,
      );
    }
    const failure = sent.find((x) => !x.outcome.ok);
    if (!failure) {
      if (carryOn) return this.#claimRun(trx, webhook.id, unsent);
      await repo.releaseWebhook(trx, webhook.id, this.#owner);
      return [];
    }
    const { delivery, outcome, at } = failure;
    const doneAt = Date.parse(at);
    const round = delivery.round_attempts + 1;
    const exhausted = round >= MAX_ATTEMPTS;
    const delay = exhausted ? 0 : this.#retryDelay(round, outcome);
    await repo.recordFailure(trx, delivery.id, {
      attempts: delivery.attempts + 1,
      round_attempts: round,
      next_attempt_at: isoFromMs(doneAt + delay),
      last_response_code: outcome.status,
      last_response_time_ms: outcome.responseTimeMs,
      last_error: outcome.error,
      updated_at: at,
    });
    await repo.releaseWebhook(trx, webhook.id, this.#owner);
    if (exhausted) {
      // Six failures in a row: the webhook is disabled until its owner re-enables it.
      await repo.markWebhookFailed(trx, webhook.id, at);
      this.forget(webhook.id);
    }
    return [];
  }

  /** A webhook's row and opened secret, kept a moment (a burst of deliveries reads it once). */
  async #webhook(id: string): Promise<CachedWebhook | undefined> {
    const now = this.clock.now();
    const cached = this.#webhooks.get(id);
    if (cached && now - cached.at < WEBHOOK_CACHE_MS) return cached;
    const row = await repo.webhookById(this.db, id);
    if (!row) {
      this.#webhooks.delete(id);
      return undefined;
    }
    const secret = this.secretBox.open(row.secret_sealed, row.id);
    const fresh = { row, secret, keys: signingKeys(secret), at: now };
    if (this.#webhooks.size >= 10_000) this.#webhooks.clear();
    this.#webhooks.set(id, fresh);
    return fresh;
  }

  /** Drop a webhook's cached row (it was updated or deleted). */
  forget(id: string): void {
    this.#webhooks.delete(id);
  }

  /** Delay after the `round`-th failure: the spec's table, a little jitter, Retry-After as a floor. */
  #retryDelay(round: number, outcome: SendOutcome): number {
    const base = RETRY_DELAYS_MS[round - 1]!;
    let delay = base + Math.floor(Math.random() * base * this.#options.jitter);
    if (outcome.retryAfterSeconds !== null && (outcome.status === 429 || outcome.status === 503)) {
      delay = Math.max(delay, outcome.retryAfterSeconds * 1000);
    }
    return delay;
  }

  /** The signed headers of one attempt (the signatures cover this moment's timestamp). */
  #headers(webhook: CachedWebhook, deliveryId: string, eventType: string, body: string) {
    return deliveryHeaders(
      {
        secret: webhook.secret,
        deliveryId,
        eventType,
        timestampSeconds: Math.floor(this.clock.now() / 1000),
        rawBody: body,
      },
      webhook.keys,
    );
  }

  async #send(webhook: CachedWebhook, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    if (this.#options.send) return this.#options.send({ url: webhook.row.url, headers, body });
    return sendWebhook({
      url: webhook.row.url,
      headers,
      body,
      allowPrivate: this.#options.allowPrivateNetworks,
      ...(this.#options.allowLoopback ? { allowLoopback: true } : {}),
      ...(this.#options.lookup ? { lookup: this.#options.lookup } : {}),
    });
  }

  /** The test endpoint: one `webhook.test` delivery now, outside the ordered queue, not retried. */
  async sendTest(webhook: WebhookRow): Promise<AttemptRow> {
    const id = newId("whd");
    const nowIso = isoNow(this.clock);
    const body = JSON.stringify({
      id,
      type: "webhook.test",
      timestamp: nowIso,
      data: { webhook_id: webhook.id, message: "This is a test event from crossbook." },
    });
    this.forget(webhook.id);
    const cached = await this.#webhook(webhook.id);
    if (!cached) throw new Error(`webhook ${webhook.id} vanished`);
    const headers = this.#headers(cached, id, "webhook.test", body);
    const outcome = await this.#send(cached, headers, body);
    // No delivery row holds a test's body: the attempt keeps it.
    const row = attemptRow(
      { id, webhook_id: webhook.id, event_type: "webhook.test" } as DeliveryRow,
      1,
      outcome,
      isoNow(this.clock),
      headers,
      body,
    );
    await repo.insertAttempt(this.db, row);
    return row;
  }
}

/** Whether a webhook receives an event: its own account's (same environment) or a global one. */
function receives(webhook: WebhookRow, event: RawRecordedEvent): boolean {
  if (event.created_at < webhook.created_at) return false;
  if (event.account_id === null) return true;
  if (event.account_id !== webhook.account_id) return false;
  return event.environment === null || event.environment === webhook.environment;
}

function attemptRow(
  delivery: Pick<DeliveryRow, "id" | "webhook_id" | "event_type">,
  attempt: number,
  outcome: SendOutcome,
  at: string,
  headers: Record<string, string>,
  body: string | null,
): AttemptRow {
  return {
    id: newId("wha"),
    delivery_id: delivery.id,
    webhook_id: delivery.webhook_id,
    event_type: delivery.event_type,
    attempt,
    status: outcome.ok ? "success" : "failed",
    response_code: outcome.status,
    response_time_ms: outcome.responseTimeMs,
    error: outcome.error,
    created_at: at,
    request_headers: JSON.stringify(headers),
    request_body: body,
  };
}
