/**
 * The console's webhooks pages (issue 22, part 4): the webhooks of the account in the chosen
 * environment, registering one (HTTPS URL, events, a secret supplied or generated and shown once),
 * and per webhook: its events, a test event, deletion (confirmed on a page of its own, so it works
 * without script), re-enabling after its retries ran out, and the delivery log with what each
 * attempt sent and a "retry now" for failed deliveries. Everything goes through WebhooksService,
 * as the signed-in account's owner, so another account's webhook is a 404 here as in the API.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SUBSCRIBABLE_EVENT_TYPES } from "../events/types";
import { AppError } from "../http/errors";
import type { AttemptRow, WebhookRow } from "../webhooks/repo";
import type { DeliveryLogEntry } from "../webhooks/service";
import { fieldErrorsOf, formOf, messageOf, redirect, render, requireUser, text, values } from "./context";
import { html, type SafeHtml } from "./html";
import { type ConsoleUser, csrfField, type FieldErrors, type Flash, field, num, time } from "./layout";
import type { ConsoleDeps } from "./plugin";

/** Attempts read for the delivery log (their deliveries are grouped; failed pending ones always show). */
const LOG_ATTEMPTS = 100;
const MAX_URL_LENGTH = 2048;

type Params = { id: string };
type DeliveryParams = { id: string; delivery: string };

/** A webhook's events in the API's order of event types (as stored, they keep the order chosen). */
const eventsOf = (webhook: WebhookRow): string[] => {
  const order = (type: string) => (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).indexOf(type);
  return (JSON.parse(webhook.events) as string[]).sort((a, b) => order(a) - order(b));
};
const webhookUrl = (id: string) => `/console/webhooks/${encodeURIComponent(id)}`;

/** A URL that may wrap after its slashes and dots (a long one must not widen a phone's page). */
function breakable(url: string): SafeHtml {
  return html`${url.split(/(?<=[/.?&=])/).map((part, i) => (i === 0 ? part : html`<wbr>${part}`))}`;
}

function statusBadge(webhook: WebhookRow): SafeHtml {
  return webhook.status === "failed"
    ? html`<span class="badge error">Disabled: retries ran out</span>`
    : html`<span class="badge ok">Active</span>`;
}

/** The event type checkboxes, in a fieldset whose error sits next to it. */
function eventsFieldset(checked: readonly string[], errors: FieldErrors | undefined, idPrefix: string) {
  const error = errors?.["events"];
  return html`<fieldset ${error ? html`aria-describedby="${idPrefix}-events-error"` : ""}>
    <legend>Events</legend>
    <div class="checks">
      ${SUBSCRIBABLE_EVENT_TYPES.map(
        (type) =>
          html`<label><input type="checkbox" name="events" value="${type}" ${
            checked.includes(type) ? html`checked` : ""
          }> <code>${type}</code></label>`,
      )}
    </div>
    ${error ? html`<div class="error" id="${idPrefix}-events-error">${error}</div>` : ""}
  </fieldset>`;
}

interface RegisterForm {
  url: string;
  events: string[];
  errors?: FieldErrors;
  flash?: Flash[];
}

async function listPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  form: RegisterForm = { url: "", events: [] },
  status = 200,
) {
  const webhooks = await deps.webhooks.list(user.owner);
  return render(
    request,
    reply,
    {
      title: "Webhooks",
      section: "webhooks",
      flash: form.flash ?? [],
      body: html`<h1>Webhooks</h1>
        <p class="muted">Signed HTTPS deliveries of your account's ${user.environment} events. Failed deliveries
          are retried after 1 minute, 5 minutes, 30 minutes, 2 hours and 12 hours; after six failures in a row the
          webhook is disabled until you re-enable it.</p>
        ${
          webhooks.length === 0
            ? html`<p data-testid="no-webhooks">No webhooks in the ${user.environment} environment yet.</p>`
            : html`<table class="responsive">
          <thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Created</th></tr></thead>
          <tbody>
            ${webhooks.map(
              (w) => html`<tr data-testid="webhook">
                <td data-label="URL"><a href="${webhookUrl(w.id)}"><code>${w.url}</code></a></td>
                <td data-label="Events">${eventsOf(w).join(", ")}</td>
                <td data-label="Status">${statusBadge(w)}${
                  w.failed_at ? html`<div class="muted">since ${time(w.failed_at)}</div>` : ""
                }</td>
                <td data-label="Created">${time(w.created_at)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
        }
        <h2>Register a webhook</h2>
        <form method="post" action="/console/webhooks" class="stack card" novalidate>
          ${csrfField(user)}
          ${field({
            name: "url",
            label: "HTTPS URL",
            type: "url",
            value: form.url,
            errors: form.errors,
            required: true,
            hint: "Where deliveries are POSTed. It must be https:// and reachable on the public internet.",
            attrs: html`maxlength="${MAX_URL_LENGTH}" inputmode="url" spellcheck="false"`,
          })}
          ${eventsFieldset(form.events, form.errors, "register")}
          ${field({
            name: "secret",
            label: "Signing secret (optional)",
            type: "password",
            errors: form.errors,
            autocomplete: "off",
            hint: "Leave empty to have one generated (shown once). Your own: 16 to 256 characters.",
            attrs: html`spellcheck="false"`,
          })}
          <div class="actions"><button type="submit">Register webhook</button></div>
        </form>`,
    },
    status,
  );
}

function secretPage(request: FastifyRequest, reply: FastifyReply, webhook: WebhookRow, secret: string) {
  return render(request, reply, {
    title: "Webhook registered",
    section: "webhooks",
    flash: [{ kind: "ok", text: `Webhook registered for ${webhook.url}.` }],
    body: html`<div class="card">
      <h1>Webhook registered</h1>
      <p>Deliveries are signed with this secret (<code>X-Service-Signature</code> and
        <code>webhook-signature</code>). Copy it into your receiver now:
        <strong>you will not see this again.</strong></p>
      <code class="secret" id="webhook-secret" data-testid="webhook-secret">${secret}</code>
      <p class="actions">
        <button type="button" data-copy="webhook-secret" hidden>Copy</button>
        <a class="button secondary" href="${webhookUrl(webhook.id)}">Go to the webhook</a>
      </p>
    </div>`,
  });
}

// --- the delivery log ------------------------------------------------------------------------------

const STATES: Record<DeliveryLogEntry["state"], { kind: string; label: string }> = {
  delivered: { kind: "ok", label: "Delivered" },
  retrying: { kind: "warn", label: "Failed, will retry" },
  given_up: { kind: "error", label: "Failed, given up" },
  held: { kind: "warn", label: "Waiting (webhook disabled)" },
  queued: { kind: "", label: "Queued" },
  test_ok: { kind: "ok", label: "Test delivered" },
  test_failed: { kind: "error", label: "Test failed" },
};

/** A JSON body indented for reading (as sent when it is not JSON). */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function responseOf(attempt: AttemptRow | undefined): string {
  if (!attempt) return "—";
  return attempt.response_code === null ? "no answer" : String(attempt.response_code);
}

function attemptBlock(attempt: AttemptRow, body: string | null): SafeHtml {
  const headers = attempt.request_headers
    ? (JSON.parse(attempt.request_headers) as Record<string, string>)
    : null;
  const payload = attempt.request_body ?? body;
  return html`<div class="attempt" data-testid="attempt">
    <p><strong>Attempt ${num(attempt.attempt)}</strong>
      <span class="badge ${attempt.status === "success" ? "ok" : "error"}">${attempt.status === "success" ? "success" : "failed"}</span>
      · ${time(attempt.created_at)} · response ${responseOf(attempt)} · ${num(attempt.response_time_ms)} ms
      ${attempt.error ? html`· <span class="error-text">${attempt.error}</span>` : ""}</p>
    <details>
      <summary>Request headers</summary>
      ${
        headers
          ? html`<pre data-testid="attempt-headers">${Object.entries(headers)
              .map(([name, value]) => `${name}: ${value}`)
              .join("\n")}</pre>
            <p class="muted">As signed for this attempt; the HTTP client adds Host and Content-Length.${
              attempt.response_code === null
                ? " No answer came: the request may not have reached the receiver."
                : ""
            }</p>`
          : html`<p class="muted">Not recorded (an attempt from before headers were kept).</p>`
      }
    </details>
    <details>
      <summary>Payload</summary>
      ${payload === null ? html`<p class="muted">Not recorded.</p>` : html`<pre data-testid="attempt-payload">${pretty(payload)}</pre>`}
    </details>
  </div>`;
}

function deliveryLog(webhook: WebhookRow, user: ConsoleUser, entries: DeliveryLogEntry[]): SafeHtml {
  if (entries.length === 0)
    return html`<p data-testid="no-deliveries" class="muted">Nothing sent yet. Send a test event to try the endpoint.</p>`;
  return html`<table class="responsive" data-testid="delivery-log">
    <thead><tr><th>Event</th><th>Status</th><th class="num">Response</th><th>Time</th><th>Error</th>
      <th class="num">Retries</th><th></th></tr></thead>
    <tbody>
      ${entries.map((entry) => {
        const latest = entry.attempts[0];
        const state = STATES[entry.state];
        const retries = Math.max(0, (entry.delivery?.attempts ?? latest?.attempt ?? 1) - 1);
        const retryable = entry.state === "retrying" || entry.state === "given_up" || entry.state === "held";
        return html`<tr data-testid="delivery" data-delivery="${entry.id}">
          <td data-label="Event"><code>${entry.event_type}</code><div class="muted mono">${entry.id}</div></td>
          <td data-label="Status"><span class="badge ${state.kind}" data-testid="delivery-status">${state.label}</span>${
            entry.state === "retrying" && entry.delivery
              ? html`<div class="muted">next attempt ${time(entry.delivery.next_attempt_at)}</div>`
              : ""
          }</td>
          <td data-label="Response" class="num" data-testid="delivery-code">${responseOf(latest)}</td>
          <td data-label="Time">${time(latest?.created_at ?? entry.delivery?.created_at)}</td>
          <td data-label="Error">${latest?.error ?? html`<span class="muted">—</span>`}</td>
          <td data-label="Retries" class="num">${num(retries)}</td>
          <td data-label="Action">${
            retryable
              ? html`<form method="post" action="${webhookUrl(webhook.id)}/deliveries/${encodeURIComponent(entry.id)}/retry">
                  ${csrfField(user)}<button type="submit" class="small">${
                    webhook.status === "failed" ? "Re-enable and retry now" : "Retry now"
                  }</button></form>`
              : ""
          }</td>
        </tr>
        <tr class="attempts">
          <td data-label="Attempts" colspan="7">
            <details>
              <summary>${num(entry.attempts.length)} ${entry.attempts.length === 1 ? "attempt" : "attempts"}: payload and headers</summary>
              ${entry.attempts.map((a) => attemptBlock(a, entry.delivery?.body ?? null))}
            </details>
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

async function webhookPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  id: string,
  edit: { events?: string[]; errors?: FieldErrors } = {},
  status = 200,
) {
  const webhook = await deps.webhooks.get(user.owner, id);
  const log = await deps.webhooks.deliveryLog(user.owner, id, LOG_ATTEMPTS);
  const base = webhookUrl(webhook.id);
  return render(
    request,
    reply,
    {
      title: "Webhook",
      section: "webhooks",
      body: html`<p><a href="/console/webhooks">← Webhooks</a></p>
        <h1>Webhook <code>${breakable(webhook.url)}</code></h1>
        <div class="card">
          <div class="stats">
            <div><div class="muted">Status</div><div data-testid="webhook-status">${statusBadge(webhook)}</div></div>
            <div><div class="muted">Environment</div><div>${webhook.environment}</div></div>
            <div><div class="muted">Created</div><div>${time(webhook.created_at)}</div></div>
            <div><div class="muted">Pending deliveries</div><div class="value">${num(log.pending)}</div></div>
          </div>
          <p class="muted mono">${webhook.id}</p>
        </div>
        ${
          webhook.status === "failed"
            ? html`<div class="flash warn" role="status" data-testid="failed-note">
                <p>Disabled ${time(webhook.failed_at)}: six attempts of a delivery failed in a row. Nothing is sent
                  until you re-enable it; ${num(log.pending)} ${log.pending === 1 ? "delivery is" : "deliveries are"}
                  waiting and will be retried at once, with a fresh round of six attempts.</p>
                <form method="post" action="${base}/enable">${csrfField(user)}
                  <button type="submit">Re-enable webhook</button></form>
              </div>`
            : ""
        }
        <div class="actions">
          <form method="post" action="${base}/test">${csrfField(user)}
            <button type="submit">Send a test event</button></form>
          <a class="button danger" href="${base}/delete">Delete…</a>
        </div>
        <h2>Edit events</h2>
        <form method="post" action="${base}/events" class="stack card" novalidate>
          ${csrfField(user)}
          ${eventsFieldset(edit.events ?? eventsOf(webhook), edit.errors, "edit")}
          <div class="actions"><button type="submit">Save events</button></div>
        </form>
        <h2>Delivery log</h2>
        <p class="muted">The latest deliveries, newest first, with every attempt. A failed delivery holds back the
          ones after it (events arrive in order); "Retry now" sends it at once instead of at its next retry time,
          and counts as one of the six attempts in a row.</p>
        ${deliveryLog(webhook, user, log.entries)}`,
    },
    status,
  );
}

export function registerWebhooksPages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get("/webhooks", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return listPage(request, reply, deps, user);
  });

  app.post("/webhooks", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const form = formOf(request);
    const url = text(form, "url");
    const events = values(form, "events");
    const secret = typeof form["secret"] === "string" ? form["secret"] : "";
    const local: FieldErrors = {};
    if (!url) local["url"] = "Enter the HTTPS URL of your receiver";
    else if (url.length > MAX_URL_LENGTH) local["url"] = `must be at most ${MAX_URL_LENGTH} characters`;
    if (events.length === 0) local["events"] = "Choose at least one event type";
    // The secret is never written back into the form.
    if (Object.keys(local).length > 0)
      return listPage(request, reply, deps, user, { url, events, errors: local }, 400);
    try {
      const created = await deps.webhooks.create(user.owner, {
        url,
        events,
        ...(secret === "" ? {} : { secret }),
      });
      if (created.secret) return secretPage(request, reply, created.webhook, created.secret);
      return redirect(request, reply, webhookUrl(created.webhook.id), {
        kind: "ok",
        text: `Webhook registered for ${created.webhook.url}, signed with your secret.`,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      const errors = fieldErrorsOf(error);
      return listPage(
        request,
        reply,
        deps,
        user,
        {
          url,
          events,
          ...(errors ? { errors } : { flash: [{ kind: "error", text: messageOf(error) }] }),
        },
        error.status,
      );
    }
  });

  app.get<{ Params: Params }>("/webhooks/:id", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return webhookPage(request, reply, deps, user, request.params.id);
  });

  app.post<{ Params: Params }>("/webhooks/:id/events", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const id = request.params.id;
    const events = values(formOf(request), "events");
    if (events.length === 0)
      return webhookPage(
        request,
        reply,
        deps,
        user,
        id,
        { events, errors: { events: "Choose at least one event type" } },
        400,
      );
    try {
      await deps.webhooks.update(user.owner, id, { events });
    } catch (error) {
      const errors = fieldErrorsOf(error);
      if (!errors) throw error;
      return webhookPage(request, reply, deps, user, id, { events, errors }, 400);
    }
    return redirect(request, reply, webhookUrl(id), { kind: "ok", text: "Events saved." });
  });

  app.post<{ Params: Params }>("/webhooks/:id/test", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const id = request.params.id;
    const attempt = await deps.webhooks.test(user.owner, id);
    const flash: Flash =
      attempt.status === "success"
        ? {
            kind: "ok",
            text: `Test event delivered: HTTP ${attempt.response_code} in ${num(attempt.response_time_ms)} ms.`,
          }
        : {
            kind: "error",
            text: `Test event failed: ${attempt.error ?? `HTTP ${attempt.response_code}`}. It is not retried.`,
          };
    return redirect(request, reply, webhookUrl(id), flash);
  });

  app.post<{ Params: Params }>("/webhooks/:id/enable", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const id = request.params.id;
    const before = await deps.webhooks.get(user.owner, id);
    if (before.status !== "failed")
      return redirect(request, reply, webhookUrl(id), { kind: "ok", text: "The webhook is already active." });
    await deps.webhooks.update(user.owner, id, { status: "active" });
    return redirect(request, reply, webhookUrl(id), {
      kind: "ok",
      text: "Webhook re-enabled: its waiting deliveries are being sent now.",
    });
  });

  app.post<{ Params: DeliveryParams }>("/webhooks/:id/deliveries/:delivery/retry", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const { id, delivery } = request.params;
    await deps.webhooks.get(user.owner, id); // another account's webhook: the 404 page
    try {
      const { reenabled } = await deps.webhooks.retry(user.owner, id, delivery);
      return redirect(request, reply, webhookUrl(id), {
        kind: "ok",
        text: reenabled
          ? "Webhook re-enabled: this delivery, then the others waiting, are being sent now."
          : "The delivery is due now and goes out at once (unless the endpoint is held back after repeated timeouts).",
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return redirect(request, reply, webhookUrl(id), { kind: "error", text: messageOf(error) });
    }
  });

  app.get<{ Params: Params }>("/webhooks/:id/delete", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const webhook = await deps.webhooks.get(user.owner, request.params.id);
    return render(request, reply, {
      title: "Delete webhook",
      section: "webhooks",
      body: html`<div class="card narrow">
        <h1>Delete this webhook?</h1>
        <p><code>${breakable(webhook.url)}</code></p>
        <p>Nothing more is sent to it: its waiting deliveries and its delivery log are deleted with it. This cannot
          be undone.</p>
        <form method="post" action="${webhookUrl(webhook.id)}/delete" class="actions">
          ${csrfField(user)}
          <button type="submit" class="danger">Delete webhook</button>
          <a class="button secondary" href="${webhookUrl(webhook.id)}">Cancel</a>
        </form>
      </div>`,
    });
  });

  app.post<{ Params: Params }>("/webhooks/:id/delete", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const webhook = await deps.webhooks.delete(user.owner, request.params.id);
    return redirect(request, reply, "/console/webhooks", {
      kind: "ok",
      text: `Webhook ${webhook.url} deleted.`,
    });
  });
}
