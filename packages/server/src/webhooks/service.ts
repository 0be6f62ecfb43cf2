/**
 * Webhook registrations: create (HTTPS only, save the demo's loopback receivers; behind the SSRF
 * guard; known event types), list, read, update (events, url, secret rotation, re-enable), delete,
 * send a test, and read delivery records.
 * A webhook belongs to the account and the environment of the key that made it, and receives that
 * account's events of that environment (plus global ones such as market.matched).
 */
import type { Owner } from "../access/owner";
import { SUBSCRIBABLE_EVENT_TYPES } from "../events/types";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import { newId } from "../infra/ids";
import type { SecretBox } from "../infra/secretbox";
import { MAX_ATTEMPTS, type WebhookDispatcher } from "./dispatcher";
import type { AttemptRow, LoggedDelivery, WebhookRow } from "./repo";
import * as repo from "./repo";
import { generateSecret } from "./signing";
import { checkWebhookUrl, type LookupFn } from "./ssrf";

export const MAX_WEBHOOKS_PER_ACCOUNT = 25;
const SUBSCRIBABLE: ReadonlySet<string> = new Set(SUBSCRIBABLE_EVENT_TYPES);

export interface CreateWebhookInput {
  url: string;
  events: string[];
  secret?: string;
}

export interface UpdateWebhookInput {
  url?: string;
  events?: string[];
  secret?: string;
  rotate_secret?: boolean;
  status?: "active";
}

/**
 * One delivery in the console's log: its attempts (newest first) and, for a queued delivery, its
 * row (null for a `webhook.test`, which has none). `state` is where it stands now.
 */
export interface DeliveryLogEntry {
  id: string;
  event_type: string;
  delivery: LoggedDelivery | null;
  attempts: AttemptRow[];
  state: "delivered" | "retrying" | "given_up" | "held" | "queued" | "test_ok" | "test_failed";
}

export interface DeliveryLog {
  entries: DeliveryLogEntry[];
  /** Deliveries not yet delivered (queued, waiting for a retry, or held while the webhook is failed). */
  pending: number;
}

export interface WebhooksOptions {
  allowPrivateNetworks: boolean;
  /** Loopback receivers allowed, over http too (`crossbook demo`). */
  allowLoopback?: boolean;
  /** Tests resolve hostnames themselves. */
  lookup?: LookupFn;
}

export class WebhooksService {
  constructor(
    private readonly db: Db,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly dispatcher: WebhookDispatcher,
    private readonly options: WebhooksOptions,
  ) {}

  async create(owner: Owner, input: CreateWebhookInput): Promise<{ webhook: WebhookRow; secret?: string }> {
    const events = this.#events(input.events);
    const url = await this.#url(input.url);
    if (input.secret !== undefined) this.#checkSecret(input.secret);
    if ((await repo.countWebhooks(this.db, owner.accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT)
      throw new AppError("WEBHOOK_LIMIT_REACHED", undefined, { limit: MAX_WEBHOOKS_PER_ACCOUNT });
    const secret = input.secret ?? generateSecret();
    const id = newId("wh");
    const now = isoNow(this.clock);
    const webhook: WebhookRow = {
      id,
      account_id: owner.accountId,
      environment: owner.environment,
      url,
      events: JSON.stringify(events),
      secret_sealed: this.secretBox.seal(secret, id),
      status: "active",
      failed_at: null,
      created_at: now,
      updated_at: now,
      lease_owner: null,
      lease_until: null,
    };
    await repo.insertWebhook(this.db, webhook);
    // A generated secret is shown this once; a supplied one is never echoed.
    return input.secret === undefined ? { webhook, secret } : { webhook };
  }

  list(owner: Owner): Promise<WebhookRow[]> {
    return repo.listWebhooks(this.db, owner);
  }

  async get(owner: Owner, id: string): Promise<WebhookRow> {
    const webhook = await repo.findWebhook(this.db, owner, id);
    if (!webhook) throw new AppError("WEBHOOK_NOT_FOUND", `No webhook ${id}`, { webhook_id: id });
    return webhook;
  }

  async update(
    owner: Owner,
    id: string,
    input: UpdateWebhookInput,
  ): Promise<{ webhook: WebhookRow; secret?: string }> {
    const webhook = await this.get(owner, id);
    if (input.secret !== undefined && input.rotate_secret)
      throw validationError({
        "body.rotate_secret": "give a new secret or ask for one to be generated, not both",
      });
    const changes: Partial<WebhookRow> = { updated_at: isoNow(this.clock) };
    if (input.events !== undefined) changes.events = JSON.stringify(this.#events(input.events));
    if (input.url !== undefined) changes.url = await this.#url(input.url);
    let generated: string | undefined;
    if (input.secret !== undefined) {
      this.#checkSecret(input.secret);
      changes.secret_sealed = this.secretBox.seal(input.secret, id);
    } else if (input.rotate_secret) {
      generated = generateSecret();
      changes.secret_sealed = this.secretBox.seal(generated, id);
    }
    const reenable = input.status === "active" && webhook.status === "failed";
    if (reenable) {
      changes.status = "active";
      changes.failed_at = null;
    }
    await this.db.transaction().execute(async (trx) => {
      await repo.updateWebhook(trx, id, changes);
      // Re-enabled: what waited resumes now, with a fresh round of six attempts.
      if (reenable) await repo.resumeDeliveries(trx, id, changes.updated_at!);
    });
    this.dispatcher.forget(id);
    if (reenable) this.dispatcher.kick();
    const updated = { ...webhook, ...changes };
    return generated ? { webhook: updated, secret: generated } : { webhook: updated };
  }

  async delete(owner: Owner, id: string): Promise<WebhookRow> {
    const webhook = await this.get(owner, id);
    await this.db.transaction().execute((trx) => repo.deleteWebhook(trx, id));
    this.dispatcher.forget(id);
    return webhook;
  }

  /** Sends a `webhook.test` event now (outside the ordered queue) and returns its attempt. */
  async test(owner: Owner, id: string): Promise<AttemptRow> {
    const webhook = await this.get(owner, id);
    return this.dispatcher.sendTest(webhook);
  }

  async deliveries(owner: Owner, id: string, limit: number): Promise<AttemptRow[]> {
    await this.get(owner, id);
    return repo.recentAttempts(this.db, id, limit);
  }

  /**
   * The console's delivery log: the deliveries of the latest `limit` attempts, grouped, with every
   * failed delivery still pending first even when its attempts are older than those.
   */
  async deliveryLog(owner: Owner, id: string, limit: number): Promise<DeliveryLog> {
    const webhook = await this.get(owner, id);
    const [attempts, failing, pending] = await Promise.all([
      repo.recentAttempts(this.db, id, limit),
      repo.failedPendingDeliveries(this.db, id),
      repo.countPending(this.db, id),
    ]);
    const byDelivery = new Map<string, AttemptRow[]>();
    for (const d of failing) byDelivery.set(d.id, []);
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id);
      if (list) list.push(a);
      else byDelivery.set(a.delivery_id, [a]);
    }
    const missing = failing.filter((d) => byDelivery.get(d.id)!.length === 0).map((d) => d.id);
    if (missing.length > 0) {
      for (const a of await repo.attemptsOfDeliveries(this.db, id, missing))
        byDelivery.get(a.delivery_id)!.push(a);
    }
    const rows = new Map(
      (await repo.deliveriesByIds(this.db, id, [...byDelivery.keys()])).map((d) => [d.id, d] as const),
    );
    const entries = [...byDelivery].map(([deliveryId, list]): DeliveryLogEntry => {
      const delivery = rows.get(deliveryId) ?? null;
      // Newest first by attempt number: attempts may share a timestamp.
      list.sort((a, b) => b.attempt - a.attempt || b.created_at.localeCompare(a.created_at));
      return {
        id: deliveryId,
        event_type: delivery?.event_type ?? list[0]?.event_type ?? "",
        delivery,
        attempts: list,
        state: logState(webhook, delivery, list[0]),
      };
    });
    return { entries, pending };
  }

  /**
   * "Retry now" for a failed delivery that is still pending (waiting for its next retry, or given
   * up on): it becomes due at once, and whichever dispatcher next leases the webhook's queue sends
   * it (a dispatcher sending it right now records its own outcome instead). Of a failed webhook it
   * can only be sent once the webhook is re-enabled, so that is done too: every waiting delivery,
   * this one first (it heads the queue), then starts a fresh round of six attempts.
   */
  async retry(owner: Owner, id: string, deliveryId: string): Promise<{ reenabled: boolean }> {
    const webhook = await this.get(owner, id);
    if (!(await repo.retryDeliveryNow(this.db, id, deliveryId, isoNow(this.clock)))) {
      const message = "That delivery is not waiting for a retry (it was delivered or removed)";
      throw new AppError("NOT_FOUND", message, { delivery_id: deliveryId });
    }
    if (webhook.status === "failed") {
      await this.update(owner, id, { status: "active" });
      return { reenabled: true };
    }
    this.dispatcher.kick();
    return { reenabled: false };
  }

  #events(events: string[]): string[] {
    const unknown = events.filter((e) => !SUBSCRIBABLE.has(e));
    if (unknown.length > 0)
      throw validationError(
        {
          "body.events": `unknown event types: ${unknown.join(", ")}; known: ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}`,
        },
        `Unknown event types: ${unknown.join(", ")}`,
      );
    if (events.length === 0) throw validationError({ "body.events": "subscribe to at least one event type" });
    return [...new Set(events)];
  }

  async #url(url: string): Promise<string> {
    const checked = await checkWebhookUrl(url, {
      allowPrivate: this.options.allowPrivateNetworks,
      ...(this.options.allowLoopback ? { allowLoopback: true } : {}),
      ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
    });
    if (!checked.ok) throw validationError({ "body.url": checked.reason });
    return checked.url.toString();
  }

  #checkSecret(secret: string): void {
    if (secret.length < 16 || secret.length > 256)
      throw validationError({
        "body.secret": "must be 16 to 256 characters (or leave it out to have one generated)",
      });
  }
}

/** Where a logged delivery stands, from its row (none for a test) and its latest attempt. */
function logState(
  webhook: WebhookRow,
  delivery: LoggedDelivery | null,
  latest: AttemptRow | undefined,
): DeliveryLogEntry["state"] {
  if (!delivery) return latest?.status === "success" ? "test_ok" : "test_failed";
  if (delivery.status === "success") return "delivered";
  if (delivery.attempts === 0) return "queued";
  if (webhook.status === "failed") return delivery.round_attempts >= MAX_ATTEMPTS ? "given_up" : "held";
  return "retrying";
}
