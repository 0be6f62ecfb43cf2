/**
 * Venue links: link a Polymarket or Kalshi account (the API's checks, field by field), list what is
 * linked (never a secret), unlink with a confirmation page.
 *
 * A link belongs to the account, not to an environment (one per account and venue, used by live
 * keys; the sandbox never reaches a venue), so these pages always work on the account's live owner
 * whatever the header's environment switch says: the service refuses a sandbox owner.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { Compile } from "typebox/compile";
import type { Owner } from "../access/owner";
import { credentialView } from "../credentials/routes";
import { LinkCredentialBody, WALLET_TYPES } from "../credentials/schemas";
import { type LinkCredentialInput, parseLink } from "../credentials/service";
import { AppError } from "../http/errors";
import { fieldErrors } from "../http/plumbing";
import type { VenueId } from "../venues/model";
import {
  type FormBody,
  fieldErrorsOf,
  formOf,
  messageOf,
  redirect,
  render,
  requireUser,
  text,
} from "./context";
import { html, type SafeHtml } from "./html";
import { type ConsoleUser, csrfField, type FieldErrors, type Flash, field, time } from "./layout";
import type { ConsoleDeps, ConsolePages } from "./plugin";

type LinkVenue = Extract<VenueId, "kalshi" | "polymarket">;

const VENUE_NAMES: Record<LinkVenue, string> = { kalshi: "Kalshi", polymarket: "Polymarket" };

/** The API fields each venue's form carries, in form order. */
const FORM_FIELDS: Record<LinkVenue, readonly (keyof LinkCredentialInput)[]> = {
  kalshi: ["label", "key_id", "private_key_pem"],
  polymarket: ["label", "private_key", "signature_type", "funder", "api_key", "api_secret", "api_passphrase"],
};

/** Fields never written back into a refused form: a secret is typed (or pasted) again. */
const SECRET_FIELDS = new Set(["private_key", "private_key_pem", "api_key", "api_secret", "api_passphrase"]);

/** Both venues' forms share one page, so each form field is the API's name prefixed by the venue. */
const formName = (venue: LinkVenue, apiName: string) => `${venue}_${apiName}`;

/** The API validates the body against this schema before the service sees it: so does the console. */
const linkSchema = Compile(LinkCredentialBody);

/** The schema's pattern messages quote a regular expression; a person needs words. */
const PATTERN_MESSAGES: Record<string, string> = {
  private_key: "must be 0x followed by 64 hex digits",
  funder: "must be 0x followed by 40 hex digits",
  key_id: "must be letters, digits, - and _ only (the key ID Kalshi shows, a UUID)",
};

const liveOwner = (user: ConsoleUser): Owner => ({ accountId: user.account.id, environment: "live" });

function isVenue(value: string): value is LinkVenue {
  return value === "kalshi" || value === "polymarket";
}

/** The posted form as the API's link body: empty fields are left out, as an API caller would. */
function linkInput(venue: LinkVenue, form: FormBody): LinkCredentialInput {
  const input: Record<string, unknown> = { venue };
  for (const name of FORM_FIELDS[venue]) {
    // Browsers send textarea lines as CRLF; a PEM reads the same either way, but keep it plain.
    const value = text(form, formName(venue, name)).replace(/\r\n?/g, "\n");
    if (value === "") continue;
    // A select's value is text; the API takes the number (anything else fails its enum check).
    input[name] = name === "signature_type" && /^\d{1,3}$/.test(value) ? Number(value) : value;
  }
  return input as unknown as LinkCredentialInput;
}

/**
 * Every problem with a link body, by API field (`body.key_id`), as the API would name them: the
 * schema's format checks, then the service's checks of the key material and the venue's rules.
 */
function linkProblems(input: LinkCredentialInput): Record<string, string> {
  const failures = linkSchema.Check(input) ? [] : [...linkSchema.Errors(input)];
  const schema = fieldErrors("body", failures);
  for (const failure of failures) {
    const name = failure.instancePath.replace(/^\//, "");
    const plain = PATTERN_MESSAGES[name];
    if (failure.keyword === "pattern" && plain) schema[`body.${name}`] = plain;
  }
  let service: Record<string, string> = {};
  try {
    parseLink(input);
  } catch (error) {
    const fields = fieldErrorsOf(error);
    if (!fields) throw error;
    service = Object.fromEntries(Object.entries(fields).map(([name, message]) => [`body.${name}`, message]));
  }
  // The schema's words win where both speak of a field: they are what the API would answer.
  return { ...service, ...schema };
}

/** The refused fields under the form's names; a problem with no field of the form is returned apart. */
function toFormErrors(
  venue: LinkVenue,
  problems: Record<string, string>,
): { errors: FieldErrors; other: string[] } {
  const errors: FieldErrors = {};
  const other: string[] = [];
  for (const [name, message] of Object.entries(problems)) {
    const plain = name.replace(/^body\.?/, "");
    if ((FORM_FIELDS[venue] as readonly string[]).includes(plain)) errors[formName(venue, plain)] = message;
    else other.push(plain ? `${plain} ${message}` : message);
  }
  return { errors, other };
}

interface RefusedLink {
  venue: LinkVenue;
  /** The form's non-secret values, to fill it again. */
  values: Record<string, string>;
  errors: FieldErrors;
}

function kalshiCard(user: ConsoleUser, linked: boolean, refused: RefusedLink | undefined): SafeHtml {
  const mine = refused?.venue === "kalshi" ? refused : undefined;
  const n = (name: string) => formName("kalshi", name);
  return html`<section class="card" aria-labelledby="link-kalshi">
    <h2 id="link-kalshi">${linked ? "Replace the Kalshi link" : "Link Kalshi"}</h2>
    <p>Kalshi issues API keys in your Kalshi <strong>account settings → API keys</strong>: create a key
      and Kalshi shows its <strong>key ID</strong> and gives you a <strong>private key file</strong>
      (shown or downloaded once, never again). Paste the key ID below, and the whole content of the key
      file, from <code>-----BEGIN</code> to the <code>END</code> line.</p>
    <form method="post" action="/console/venues/link" class="stack" novalidate>
      ${csrfField(user)}<input type="hidden" name="venue" value="kalshi">
      ${field({ name: n("label"), label: "Label (optional)", value: mine?.values[n("label")], errors: mine?.errors, hint: "A name for you, e.g. “main account”." })}
      ${field({ name: n("key_id"), label: "Key ID", value: mine?.values[n("key_id")], errors: mine?.errors, required: true, autocomplete: "off", hint: "The API key's ID, a UUID like 8d5b2c1e-…" })}
      ${field({ name: n("private_key_pem"), label: "Private key (PEM)", type: "textarea", errors: mine?.errors, required: true, attrs: html`spellcheck="false" autocomplete="off" rows="8"`, hint: "An unencrypted RSA key of 2048 to 4096 bits (BEGIN RSA PRIVATE KEY or BEGIN PRIVATE KEY). It is encrypted when stored and never shown again." })}
      <div class="actions"><button type="submit">${linked ? "Replace Kalshi link" : "Link Kalshi"}</button></div>
    </form>
  </section>`;
}

function polymarketCard(user: ConsoleUser, linked: boolean, refused: RefusedLink | undefined): SafeHtml {
  const mine = refused?.venue === "polymarket" ? refused : undefined;
  const n = (name: string) => formName("polymarket", name);
  const typeId = `f-${n("signature_type")}`;
  const typeError = mine?.errors[n("signature_type")];
  const chosen = mine?.values[n("signature_type")] ?? "0";
  const types: Array<[string, string]> = [
    ["0", "Own wallet: the key's address holds the funds (EOA, type 0)"],
    ["1", "Email / Magic login: a proxy wallet holds the funds (type 1)"],
    ["2", "Browser wallet: a Safe holds the funds (type 2)"],
    ["3", "Deposit wallet (accounts opened since May 2026, type 3)"],
  ];
  // API credentials fold away unless the refused form was about them.
  const apiOpen = ["api_key", "api_secret", "api_passphrase"].some((name) => mine?.errors[n(name)]);
  return html`<section class="card" aria-labelledby="link-polymarket">
    <h2 id="link-polymarket">${linked ? "Replace the Polymarket link" : "Link Polymarket"}</h2>
    <p>Polymarket orders are signed by a wallet: crossbook needs that wallet's <strong>private key</strong>
      (0x and 64 hex digits), and, unless it is a plain wallet that holds the funds itself, the
      <strong>address of the wallet that holds your funds</strong> (the account address polymarket.com
      shows). Polymarket's <strong>CLOB API credentials</strong> (API key, secret and passphrase) are
      derived from the private key when crossbook trades: enter them only if you created them already,
      all three together.</p>
    <form method="post" action="/console/venues/link" class="stack" novalidate>
      ${csrfField(user)}<input type="hidden" name="venue" value="polymarket">
      ${field({ name: n("label"), label: "Label (optional)", value: mine?.values[n("label")], errors: mine?.errors })}
      ${field({ name: n("private_key"), label: "Private key", type: "password", errors: mine?.errors, required: true, autocomplete: "off", hint: "The signing wallet's key: 0x followed by 64 hex digits. Encrypted when stored, never shown again." })}
      <div class="field">
        <label for="${typeId}">Wallet type</label>
        <select id="${typeId}" name="${n("signature_type")}" ${typeError ? html`aria-invalid="true" aria-describedby="${typeId}-error"` : ""}>
          ${types.map(([value, label]) => html`<option value="${value}" ${value === chosen ? html`selected` : ""}>${label}</option>`)}
        </select>
        ${typeError ? html`<div class="error" id="${typeId}-error">${typeError}</div>` : ""}
      </div>
      ${field({ name: n("funder"), label: "Funder address", value: mine?.values[n("funder")], errors: mine?.errors, autocomplete: "off", hint: "Required for wallet types 1, 2 and 3: the proxy, Safe or deposit wallet holding the funds (0x and 40 hex digits), not the key's own address. Leave empty for type 0." })}
      <details ${apiOpen ? html`open` : ""}>
        <summary>CLOB API credentials (optional)</summary>
        ${field({ name: n("api_key"), label: "API key", type: "password", errors: mine?.errors, autocomplete: "off" })}
        ${field({ name: n("api_secret"), label: "API secret", type: "password", errors: mine?.errors, autocomplete: "off" })}
        ${field({ name: n("api_passphrase"), label: "API passphrase", type: "password", errors: mine?.errors, autocomplete: "off" })}
      </details>
      <div class="actions"><button type="submit">${linked ? "Replace Polymarket link" : "Link Polymarket"}</button></div>
    </form>
  </section>`;
}

type LinkView = ReturnType<typeof credentialView>;

function identifiers(link: LinkView): SafeHtml {
  if (link.venue === "kalshi") return html`<span>Key ID <code>${link.key_id ?? "—"}</code></span>`;
  const wallet = link.wallet_type ?? WALLET_TYPES[0];
  // One element: on a phone a cell is a flex row of its label and its content.
  return html`<span>Signer <code>${link.address ?? "—"}</code>
    <br><span class="muted">Wallet: ${wallet.replace("_", " ")}${link.funder ? html`, funds in <code>${link.funder}</code>` : ""}</span></span>`;
}

async function venuesPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  refused?: RefusedLink & { flash?: Flash[] },
  status = 200,
) {
  const links = (await deps.credentials.list(liveOwner(user))).map(credentialView);
  const linked = (venue: LinkVenue) => links.some((l) => l.venue === venue);
  return render(
    request,
    reply,
    {
      title: "Venue links",
      section: "venues",
      flash: refused?.flash ?? [],
      body: html`<h1>Venue links</h1>
        <p class="muted">Live orders reach Polymarket and Kalshi through your own accounts there. A link
          belongs to your account (one per venue, whichever environment the header shows) and is used by
          live keys only: sandbox keys trade on the simulated exchange and never reach a venue.</p>
        <h2>Linked accounts</h2>
        ${
          links.length === 0
            ? html`<p data-testid="no-links">No venue is linked yet.</p>`
            : html`<table class="responsive">
          <thead><tr><th>Venue</th><th>Label</th><th>Account</th><th>CLOB API credentials</th><th>Linked</th><th>Updated</th><th><span class="muted">Actions</span></th></tr></thead>
          <tbody>
            ${links.map(
              (l) => html`<tr data-testid="link">
                <td data-label="Venue">${VENUE_NAMES[l.venue]}</td>
                <td data-label="Label">${l.label ?? html`<span class="muted">—</span>`}</td>
                <td data-label="Account">${identifiers(l)}</td>
                <td data-label="API credentials">${l.venue === "polymarket" ? (l.has_api_credentials ? "Linked" : "Derived from the key") : html`<span class="muted">n/a</span>`}</td>
                <td data-label="Linked">${time(l.created_at)}</td>
                <td data-label="Updated">${time(l.updated_at)}</td>
                <td data-label="Actions"><a class="button small danger" href="/console/venues/${l.id}/unlink">Unlink</a></td>
              </tr>`,
            )}
          </tbody>
        </table>`
        }
        <div class="grid2">
          ${kalshiCard(user, linked("kalshi"), refused)}
          ${polymarketCard(user, linked("polymarket"), refused)}
        </div>
        <p class="muted">Linking a venue that is already linked replaces its credential. Secrets are encrypted
          at rest and never shown again; a refused form asks for them again.</p>`,
    },
    status,
  );
}

function unlinkPage(
  request: FastifyRequest,
  reply: FastifyReply,
  user: ConsoleUser,
  link: LinkView,
  refusal?: string,
  status = 200,
) {
  const name = VENUE_NAMES[link.venue];
  const action = `/console/venues/${link.id}/unlink`;
  return render(
    request,
    reply,
    {
      title: `Unlink ${name}`,
      section: "venues",
      body: html`<div class="card narrow">
        <h1>Unlink ${name}?</h1>
        <p>${identifiers(link)}${link.label ? html`<br>Label: ${link.label}` : ""}</p>
        <p>Its secrets are deleted, and live orders can no longer reach ${name} until you link it again.</p>
        ${
          refusal
            ? html`<div class="flash error" role="alert">${refusal}</div>
              <p>Cancel those orders first, or unlink anyway: crossbook then stops following them, and you manage them at ${name}.</p>
              <form method="post" action="${action}" class="actions">
                ${csrfField(user)}<input type="hidden" name="force" value="1">
                <button type="submit" class="danger">Unlink anyway</button>
                <a class="button secondary" href="/console/venues">Keep the link</a>
              </form>`
            : html`<form method="post" action="${action}" class="actions">
                ${csrfField(user)}
                <button type="submit" class="danger">Unlink ${name}</button>
                <a class="button secondary" href="/console/venues">Cancel</a>
              </form>`
        }
      </div>`,
    },
    status,
  );
}

export const registerVenuesPages: ConsolePages = (app, deps) => {
  app.get("/venues", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return venuesPage(request, reply, deps, user);
  });

  app.post("/venues/link", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const form = formOf(request);
    const venue = text(form, "venue");
    if (!isVenue(venue)) {
      const flash: Flash[] = [{ kind: "error", text: "Choose Polymarket or Kalshi to link." }];
      return venuesPage(request, reply, deps, user, { venue: "kalshi", values: {}, errors: {}, flash }, 400);
    }
    const values: Record<string, string> = {};
    for (const name of FORM_FIELDS[venue])
      if (!SECRET_FIELDS.has(name)) values[formName(venue, name)] = text(form, formName(venue, name));
    const input = linkInput(venue, form);
    const refuse = (problems: Record<string, string>, status: number) => {
      const { errors, other } = toFormErrors(venue, problems);
      const flash: Flash[] = [
        {
          kind: "error",
          text: `${VENUE_NAMES[venue]} was not linked: ${other.length > 0 ? other.join("; ") : "correct the fields marked below."}`,
        },
      ];
      return venuesPage(request, reply, deps, user, { venue, values, errors, flash }, status);
    };
    const problems = linkProblems(input);
    if (Object.keys(problems).length > 0) return refuse(problems, 400);
    try {
      const { row, replaced } = await deps.credentials.link(liveOwner(user), input);
      const view = credentialView(row);
      const which = view.venue === "kalshi" ? `key ID ${view.key_id}` : `signer ${view.address}`;
      return redirect(request, reply, "/console/venues", {
        kind: "ok",
        text: `${VENUE_NAMES[venue]} ${replaced ? "link replaced" : "linked"} (${which}).`,
      });
    } catch (error) {
      const fields = fieldErrorsOf(error);
      if (fields) {
        const named = Object.fromEntries(Object.entries(fields).map(([k, v]) => [`body.${k}`, v]));
        return refuse(named, 400);
      }
      if (error instanceof AppError && error.status < 500)
        return venuesPage(
          request,
          reply,
          deps,
          user,
          { venue, values, errors: {}, flash: [{ kind: "error", text: messageOf(error) }] },
          error.status,
        );
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>("/venues/:id/unlink", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const link = credentialView(await deps.credentials.get(liveOwner(user), request.params.id));
    return unlinkPage(request, reply, user, link);
  });

  app.post<{ Params: { id: string } }>("/venues/:id/unlink", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const owner = liveOwner(user);
    const force = text(formOf(request), "force") === "1";
    try {
      const row = await deps.credentials.unlink(owner, request.params.id, { force });
      return redirect(request, reply, "/console/venues", {
        kind: "ok",
        text: `${VENUE_NAMES[row.venue as LinkVenue] ?? row.venue} unlinked.`,
      });
    } catch (error) {
      if (!(error instanceof AppError && error.code === "VENUE_HAS_OPEN_ORDERS")) throw error;
      // The API's message names its own routes; the console says the same in its own words.
      const link = credentialView(await deps.credentials.get(owner, request.params.id));
      const open = Number((error.details as { open_orders?: number } | undefined)?.open_orders ?? 0);
      const message = `${open} live order${open === 1 ? " is" : "s are"} open on ${VENUE_NAMES[link.venue]}, so the link was kept.`;
      return unlinkPage(request, reply, user, link, message, error.status);
    }
  });
};
