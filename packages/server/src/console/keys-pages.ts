/**
 * API keys in the console, as the spec's account settings describe them: name, then generate
 * (type, agent permissions, environment); the secret shown once; list, rename, revoke. Everything
 * goes through ApiKeysService as the session-token API routes do: a signed-in person manages the
 * keys of both environments, and a revocation clears the service's auth cache, so the API refuses
 * the key from its very next request.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AgentPermission, KeyEnvironment, KeyType } from "../access/permissions";
import type { ApiKey } from "../apikeys/service";
import { AppError } from "../http/errors";
import { fieldErrorsOf, formOf, messageOf, redirect, render, requireUser, text, values } from "./context";
import { html, type SafeHtml } from "./html";
import { type ConsoleUser, csrfField, type FieldErrors, type Flash, field, num, time } from "./layout";
import type { ConsoleDeps } from "./plugin";

// Written out here rather than imported from access/: the console imports no other domain's values
// (docs/ARCHITECTURE.md); the types keep the lists in step with access/permissions.ts.
const TYPE_CHOICES: ReadonlyArray<{ value: KeyType; label: string; hint: string }> = [
  { value: "read_only", label: "Read-only", hint: "market data, prices, orders and positions; cannot trade" },
  { value: "trading", label: "Trading", hint: "read, place and cancel orders" },
  { value: "admin", label: "Admin", hint: "everything, including managing keys" },
  { value: "agent", label: "Agent", hint: "for automated agents: only the permissions chosen below" },
];
const AGENT_CHOICES: ReadonlyArray<{ value: AgentPermission; label: string }> = [
  { value: "read", label: "read" },
  { value: "trade", label: "trade" },
  { value: "manage_orders", label: "manage_orders" },
];
const ENVIRONMENT_CHOICES: ReadonlyArray<{ value: KeyEnvironment; label: string; hint: string }> = [
  { value: "sandbox", label: "Sandbox", hint: "cb_test_…: simulated trading with fake funds" },
  { value: "live", label: "Live", hint: "cb_live_…: real orders on your linked venue accounts" },
];

const typeLabel = (type: string) => TYPE_CHOICES.find((t) => t.value === type)?.label ?? type;
const keyUrl = (key: Pick<ApiKey, "id">, action: string) =>
  `/console/keys/${encodeURIComponent(key.id)}/${action}`;

/** The service's messages start in lower case ("must be 1 to 100 characters"): shown on their own. */
function sentence(errors: FieldErrors | null): FieldErrors | null {
  if (!errors) return null;
  const out: FieldErrors = {};
  for (const [name, message] of Object.entries(errors))
    out[name] = message.charAt(0).toUpperCase() + message.slice(1);
  return out;
}

function environmentBadge(environment: string): SafeHtml {
  return environment === "live"
    ? html`<span class="badge warn nowrap">live</span>`
    : html`<span class="badge nowrap">sandbox</span>`;
}

function statusCell(key: ApiKey): SafeHtml {
  return key.revoked_at
    ? html`<span class="badge error nowrap">Revoked</span> ${time(key.revoked_at)}`
    : html`<span class="badge ok nowrap">Active</span>`;
}

/** The cells every key table shares (the list, the new key, the confirmation). */
function keyCells(key: ApiKey): SafeHtml {
  return html`<td data-label="Name">${key.name}</td>
    <td data-label="Type" class="nowrap">${typeLabel(key.type)}</td>
    <td data-label="Permissions">${key.permissions.join(", ")}</td>
    <td data-label="Environment">${environmentBadge(key.environment)}</td>
    <td data-label="Prefix" class="nowrap"><code>${key.prefix}…</code></td>
    <td data-label="Created">${time(key.created_at)}</td>
    <td data-label="Last used">${key.last_used_at ? time(key.last_used_at) : html`<span class="muted">never</span>`}</td>
    <td data-label="Status"><span>${statusCell(key)}</span></td>`;
}

// "Environment" would break inside the word in a narrow column: its heading is kept whole.
const KEY_HEADINGS = html`<th scope="col">Name</th><th scope="col">Type</th><th scope="col">Permissions</th>
  <th scope="col" class="nowrap">Environment</th><th scope="col">Prefix</th><th scope="col">Created</th>
  <th scope="col">Last used</th><th scope="col">Status</th>`;

function keyTable(keys: ApiKey[], caption: string): SafeHtml {
  return html`<table class="responsive">
    <caption class="muted">${caption}</caption>
    <thead><tr>${KEY_HEADINGS}</tr></thead>
    <tbody>${keys.map((k) => html`<tr data-key-id="${k.id}">${keyCells(k)}</tr>`)}</tbody>
  </table>`;
}

interface CreateForm {
  name: string;
  type: string;
  permissions: string[];
  environment: string;
}

/** A group of radio buttons or checkboxes with its legend and error. */
function choices(o: {
  name: string;
  legend: string;
  kind: "radio" | "checkbox";
  options: ReadonlyArray<{ value: string; label: string; hint?: string }>;
  checked: (value: string) => boolean;
  errors: FieldErrors | undefined;
  hint?: string;
  /** Shown only while another field has this value (`type=agent`), where the script runs. */
  showWhen?: string;
}): SafeHtml {
  const error = o.errors?.[o.name];
  const described = [o.hint ? `f-${o.name}-hint` : "", error ? `f-${o.name}-error` : ""]
    .filter(Boolean)
    .join(" ");
  return html`<fieldset ${described ? html`aria-describedby="${described}"` : ""} ${
    o.showWhen ? html`data-show-when="${o.showWhen}"` : ""
  }>
    <legend>${o.legend}</legend>
    ${o.hint ? html`<div class="hint muted" id="f-${o.name}-hint">${o.hint}</div>` : ""}
    <div class="checks">
      ${o.options.map(
        (c) =>
          html`<label><input type="${o.kind}" name="${o.name}" value="${c.value}" ${
            o.checked(c.value) ? html`checked` : ""
          } ${error ? html`aria-invalid="true"` : ""}> <span>${c.label}${
            c.hint ? html` <span class="muted">(${c.hint})</span>` : ""
          }</span></label>`,
      )}
    </div>
    ${error ? html`<div class="error-text" id="f-${o.name}-error">${error}</div>` : ""}
  </fieldset>`;
}

function createForm(user: ConsoleUser, form: CreateForm, errors: FieldErrors | undefined): SafeHtml {
  return html`<h2 id="create-heading">Create a key</h2>
  <section class="card" aria-labelledby="create-heading">
    <p class="muted">Name it, choose what it may do, then generate it. The secret is shown once.</p>
    <form method="post" action="/console/keys" class="stack" novalidate>
      ${csrfField(user)}
      ${field({
        name: "name",
        label: "Name",
        value: form.name,
        errors,
        required: true,
        hint: "To tell your keys apart, e.g. “pricing bot”. Up to 100 characters.",
        attrs: html`maxlength="100" autocomplete="off"`,
      })}
      ${choices({
        name: "type",
        legend: "Type",
        kind: "radio",
        options: TYPE_CHOICES,
        checked: (v) => v === form.type,
        errors,
      })}
      ${choices({
        name: "permissions",
        legend: "Agent permissions",
        kind: "checkbox",
        options: AGENT_CHOICES,
        checked: (v) => form.permissions.includes(v),
        errors,
        hint: "Agent keys only (other types have fixed permissions). None chosen means read.",
        showWhen: "type=agent",
      })}
      ${choices({
        name: "environment",
        legend: "Environment",
        kind: "radio",
        options: ENVIRONMENT_CHOICES,
        checked: (v) => v === form.environment,
        errors,
      })}
      <div class="actions"><button type="submit">Generate key</button></div>
    </form>
  </section>`;
}

async function keysPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  options: { form?: CreateForm; errors?: FieldErrors; flash?: Flash[] } = {},
  status = 200,
): Promise<FastifyReply> {
  // "Last used" is written in batches (every 15 s): a use this process saw since shows at once.
  const keys = (await deps.apiKeys.list(user.account.id)).map((key) => ({
    ...key,
    last_used_at: deps.apiKeys.unwrittenUse(key.id) ?? key.last_used_at,
  }));
  // Active keys first, newest first (ids are time-ordered).
  keys.sort(
    (a, b) => Number(a.revoked_at !== null) - Number(b.revoked_at !== null) || (a.id < b.id ? 1 : -1),
  );
  const active = keys.filter((k) => !k.revoked_at).length;
  const allowed = deps.usage.limits(user.account, "read_only").keys_allowed;
  const form = options.form ?? {
    name: "",
    type: "read_only",
    permissions: ["read"],
    environment: user.environment,
  };
  return render(
    request,
    reply,
    {
      title: "API keys",
      section: "keys",
      flash: options.flash ?? [],
      body: html`<h1>API keys</h1>
        <p class="muted">Programs use a key as <code>Authorization: Bearer &lt;key&gt;</code>. Sandbox keys start
          <code>cb_test_</code>, live keys <code>cb_live_</code>.
          ${
            allowed === null
              ? html`${num(active)} active ${active === 1 ? "key" : "keys"} (no limit on the ${user.account.tier} tier).`
              : html`${num(active)} of ${num(allowed)} active keys allowed on the ${user.account.tier} tier.`
          }</p>
        ${
          keys.length === 0
            ? html`<p>No keys yet: create one below.</p>`
            : html`<h2>Your keys</h2>
            <table class="responsive keys">
              <caption class="muted">Your keys, both environments. Secrets are never shown again after creation.</caption>
              <thead><tr>${KEY_HEADINGS}<th scope="col"><span class="muted">Actions</span></th></tr></thead>
              <tbody>
                ${keys.map(
                  (k) => html`<tr data-key-id="${k.id}">
                    ${keyCells(k)}
                    <td data-label="Actions"><div class="actions">
                      <a class="button small secondary" href="${keyUrl(k, "rename")}" aria-label="Rename ${k.name}">Rename</a>
                      ${
                        k.revoked_at
                          ? ""
                          : html`<a class="button small danger" href="${keyUrl(k, "revoke")}" aria-label="Revoke ${k.name}">Revoke</a>`
                      }
                      <a class="small" href="/console/usage#key-${k.id}">Usage</a>
                    </div></td>
                  </tr>`,
                )}
              </tbody>
            </table>`
        }
        ${createForm(user, form, options.errors)}`,
    },
    status,
  );
}

/** The key of the route's `:id` (the API's 404 page when it is not this account's). */
async function keyOf(deps: ConsoleDeps, user: ConsoleUser, id: string): Promise<ApiKey> {
  return deps.apiKeys.get(user.account.id, id);
}

function renamePage(
  request: FastifyRequest,
  reply: FastifyReply,
  key: ApiKey,
  user: ConsoleUser,
  name: string,
  errors: FieldErrors | undefined,
  status = 200,
): FastifyReply {
  return render(
    request,
    reply,
    {
      title: "Rename key",
      section: "keys",
      body: html`<div class="card narrow">
        <h1>Rename key</h1>
        <p><code>${key.prefix}…</code> ${environmentBadge(key.environment)} ${typeLabel(key.type)} key, now named
          “${key.name}”. Renaming does not change the secret.</p>
        <form method="post" action="${keyUrl(key, "rename")}" class="stack" novalidate>
          ${csrfField(user)}
          ${field({ name: "name", label: "New name", value: name, errors, required: true, attrs: html`maxlength="100" autocomplete="off"` })}
          <div class="actions"><button type="submit">Save name</button><a href="/console/keys">Cancel</a></div>
        </form>
      </div>`,
    },
    status,
  );
}

export function registerKeysPages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get("/keys", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return keysPage(request, reply, deps, user);
  });

  // Answers with the secret itself (no redirect): the page is the only place it ever appears, and
  // every console page is sent with Cache-Control: no-store.
  app.post("/keys", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const body = formOf(request);
    const form: CreateForm = {
      name: text(body, "name"),
      type: text(body, "type"),
      permissions: values(body, "permissions"),
      environment: text(body, "environment"),
    };
    let created: Awaited<ReturnType<ConsoleDeps["apiKeys"]["create"]>>;
    try {
      created = await deps.apiKeys.create(user.account.id, {
        name: form.name,
        type: form.type,
        // Only agent keys choose permissions; the boxes left ticked under another type mean nothing.
        ...(form.type === "agent" ? { permissions: form.permissions } : {}),
        environment: form.environment,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      const errors = sentence(fieldErrorsOf(error));
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return keysPage(
        request,
        reply,
        deps,
        user,
        errors
          ? {
              form,
              errors,
              flash: [{ kind: "error", text: "The key was not created: see the fields marked below." }],
            }
          : { form, flash: [{ kind: "error", text: messageOf(error) }] },
        error.status,
      );
    }
    const { apiKey, secret } = created;
    return render(request, reply, {
      title: "Your new API key",
      section: "keys",
      body: html`<section class="card" aria-labelledby="secret-heading">
        <h1 id="secret-heading">Your new API key</h1>
        <div class="flash warn" role="alert"><strong>Copy this key now: you will not see it again.</strong>
          crossbook keeps only a hash of it. If you lose it, revoke this key and create another.</div>
        <p id="new-key-label">Secret of “${apiKey.name}”:</p>
        <code id="new-key-secret" class="secret" aria-labelledby="new-key-label">${secret}</code>
        <p class="actions"><button type="button" data-copy="new-key-secret" hidden>Copy</button></p>
        ${keyTable([apiKey], "The new key")}
        <p class="muted">Send it as <code>Authorization: Bearer &lt;key&gt;</code>${
          apiKey.environment === "sandbox" ? " (sandbox keys trade with fake funds only)" : ""
        }.</p>
        <p><a class="button" href="/console/keys">I have stored it: back to API keys</a></p>
      </section>`,
    });
  });

  app.get<{ Params: { id: string } }>("/keys/:id/rename", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const key = await keyOf(deps, user, request.params.id);
    return renamePage(request, reply, key, user, key.name, undefined);
  });

  app.post<{ Params: { id: string } }>("/keys/:id/rename", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const key = await keyOf(deps, user, request.params.id);
    const name = text(formOf(request), "name");
    try {
      await deps.apiKeys.rename(user.account.id, key.id, name);
    } catch (error) {
      const errors = sentence(fieldErrorsOf(error));
      if (!errors) throw error; // not about the name (a 404 page, or a real failure)
      return renamePage(request, reply, key, user, name, errors, 400);
    }
    return redirect(request, reply, "/console/keys", { kind: "ok", text: `Key renamed to “${name}”.` });
  });

  // A page of its own, not a script's confirm(): revoking works without JavaScript.
  app.get<{ Params: { id: string } }>("/keys/:id/revoke", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const key = await keyOf(deps, user, request.params.id);
    return render(request, reply, {
      title: "Revoke key",
      section: "keys",
      body: html`<section class="card" aria-labelledby="revoke-heading">
        <h1 id="revoke-heading">${key.revoked_at ? html`“${key.name}” is revoked` : html`Revoke “${key.name}”?`}</h1>
        ${keyTable([key], "The key")}
        ${
          key.revoked_at
            ? html`<p>This key was revoked ${time(key.revoked_at)}; nothing more to do.</p>
              <p><a href="/console/keys">Back to API keys</a></p>`
            : html`<p><strong>Revoking is immediate and cannot be undone.</strong> Any program using this key is
                refused (401) from its next request; open price streams of the key close.</p>
              <form method="post" action="${keyUrl(key, "revoke")}">
                ${csrfField(user)}
                <div class="actions">
                  <button type="submit" class="danger">Revoke key</button>
                  <a class="button secondary" href="/console/keys">Cancel</a>
                </div>
              </form>`
        }
      </section>`,
    });
  });

  app.post<{ Params: { id: string } }>("/keys/:id/revoke", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const key = await deps.apiKeys.revoke(user.account.id, request.params.id);
    return redirect(request, reply, "/console/keys", {
      kind: "ok",
      text: `Key “${key.name}” (${key.prefix}…) is revoked: the API refuses it from now on.`,
    });
  });
}
