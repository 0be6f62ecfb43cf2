/**
 * Signing in and out of the console, signing up, the account's sign-ins ("sessions"), and the
 * environment switch. Sign-in and sign-up count against the same login limits as the API's
 * (accounts/login-guard.ts), and answer a wrong email or password the same way.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Session, SignInClient } from "../accounts/service";
import { AppError } from "../http/errors";
import {
  appendCookie,
  fieldErrorsOf,
  formOf,
  messageOf,
  redirect,
  render,
  requireUser,
  text,
} from "./context";
import { clearCookie, cookie, ENVIRONMENT_COOKIE, FORM_COOKIE, readCookies, SESSION_COOKIE } from "./cookies";
import { newFormToken } from "./csrf";
import { html } from "./html";
import { csrfField, type FieldErrors, type Flash, field, time } from "./layout";
import type { ConsoleDeps } from "./plugin";

const client = (request: FastifyRequest): SignInClient => ({
  ip: request.ip,
  userAgent: request.headers["user-agent"],
});

/** Where to go after signing in: a console page only, never another site. */
function nextUrl(value: string | undefined): string {
  return value && /^\/console(\/|$|\?)/.test(value) && !value.startsWith("//") ? value : "/console/keys";
}

/** The signed-out forms' token, set as a cookie when the browser has none yet. */
function formToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookies(request)[FORM_COOKIE];
  if (existing) return existing;
  const token = newFormToken();
  appendCookie(reply, cookie(request, FORM_COOKIE, token));
  // The pages rendered below read it from the request: keep it there too.
  request.headers.cookie = `${request.headers.cookie ? `${request.headers.cookie}; ` : ""}${FORM_COOKIE}=${token}`;
  return token;
}

interface CredentialsForm {
  email: string;
  next: string;
  errors?: FieldErrors;
  flash?: Flash[];
}

function signInPage(request: FastifyRequest, reply: FastifyReply, form: CredentialsForm, status = 200) {
  const token = formToken(request, reply);
  return render(
    request,
    reply,
    {
      title: "Sign in",
      flash: form.flash ?? [],
      body: html`<div class="card narrow">
        <h1>Sign in</h1>
        <form method="post" action="/console/signin" class="stack" novalidate>
          ${csrfField(token)}
          <input type="hidden" name="next" value="${form.next}">
          ${field({ name: "email", label: "Email", type: "email", value: form.email, errors: form.errors, required: true, autocomplete: "username" })}
          ${field({ name: "password", label: "Password", type: "password", errors: form.errors, required: true, autocomplete: "current-password" })}
          <div class="actions"><button type="submit">Sign in</button></div>
        </form>
        <p class="muted">New here? <a href="/console/signup">Create an account</a></p>
      </div>`,
    },
    status,
  );
}

function signUpPage(request: FastifyRequest, reply: FastifyReply, form: CredentialsForm, status = 200) {
  const token = formToken(request, reply);
  return render(
    request,
    reply,
    {
      title: "Create an account",
      flash: form.flash ?? [],
      body: html`<div class="card narrow">
        <h1>Create an account</h1>
        <form method="post" action="/console/signup" class="stack" novalidate>
          ${csrfField(token)}
          ${field({ name: "email", label: "Email", type: "email", value: form.email, errors: form.errors, required: true, autocomplete: "username" })}
          ${field({ name: "password", label: "Password", type: "password", errors: form.errors, required: true, autocomplete: "new-password", hint: "At least 10 characters." })}
          <div class="actions"><button type="submit">Create account</button></div>
        </form>
        <p class="muted">Already have one? <a href="/console/signin">Sign in</a></p>
      </div>`,
    },
    status,
  );
}

/** Signs the browser in: the session cookie lives as long as the session. */
function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  { token, session }: { token: string; session: Session },
  next: string,
) {
  const seconds = (Date.parse(session.expires_at) - deps.clock.now()) / 1000;
  appendCookie(reply, cookie(request, SESSION_COOKIE, token, { maxAge: seconds }));
  appendCookie(reply, clearCookie(request, FORM_COOKIE));
  return redirect(request, reply, nextUrl(next));
}

export function registerAuthPages(app: FastifyInstance, deps: ConsoleDeps): void {
  const guard = deps.guard;

  app.get("/", async (request, reply) =>
    reply.redirect(request.consoleUser ? "/console/keys" : "/console/signin", 303),
  );

  app.get<{ Querystring: { next?: string } }>("/signin", async (request, reply) => {
    if (request.consoleUser) return reply.redirect(nextUrl(request.query.next), 303);
    return signInPage(request, reply, { email: "", next: nextUrl(request.query.next) });
  });

  app.post("/signin", async (request, reply) => {
    const form = formOf(request);
    const email = text(form, "email");
    const password = typeof form["password"] === "string" ? form["password"] : "";
    const next = nextUrl(text(form, "next"));
    const errors: FieldErrors = {};
    if (!email) errors["email"] = "Enter your email";
    if (!password) errors["password"] = "Enter your password";
    if (Object.keys(errors).length > 0) return signInPage(request, reply, { email, next, errors }, 400);
    try {
      const signedIn = await guard.signIn(request.ip, email, () =>
        deps.accounts.login(email, password, client(request)),
      );
      return startSession(request, reply, deps, signedIn, next);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return signInPage(
        request,
        reply,
        {
          email,
          next,
          flash: [
            {
              kind: "error",
              text: error.code === "UNAUTHORIZED" ? "Wrong email or password." : error.message,
            },
          ],
        },
        error.status,
      );
    }
  });

  app.get("/signup", async (request, reply) => {
    if (request.consoleUser) return reply.redirect("/console/keys", 303);
    return signUpPage(request, reply, { email: "", next: "/console/keys" });
  });

  app.post("/signup", async (request, reply) => {
    const form = formOf(request);
    const email = text(form, "email");
    const password = typeof form["password"] === "string" ? form["password"] : "";
    try {
      await guard.admit(request.ip);
      const account = await deps.accounts.create({ email, password });
      const opened = await deps.accounts.openSession(account.id, client(request));
      return startSession(request, reply, deps, opened, "/console/keys");
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const errors = fieldErrorsOf(error) ?? (error.code === "EMAIL_TAKEN" ? { email: error.message } : null);
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return signUpPage(
        request,
        reply,
        {
          email,
          next: "/console/keys",
          ...(errors ? { errors } : { flash: [{ kind: "error", text: messageOf(error) }] }),
        },
        error.status,
      );
    }
  });

  app.post("/signout", async (request, reply) => {
    const user = request.consoleUser;
    if (user) await deps.accounts.logout(user.session.id);
    appendCookie(reply, clearCookie(request, SESSION_COOKIE));
    return redirect(request, reply, "/console/signin", { kind: "ok", text: "Signed out." });
  });

  app.post("/environment", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const form = formOf(request);
    const environment = text(form, "environment") === "live" ? "live" : "sandbox";
    appendCookie(reply, cookie(request, ENVIRONMENT_COOKIE, environment, { maxAge: 365 * 24 * 3600 }));
    return redirect(request, reply, nextUrl(text(form, "next")));
  });

  app.get("/sessions", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const sessions = await deps.accounts.listSessions(user.account.id);
    return render(request, reply, {
      title: "Sessions",
      section: "sessions",
      body: html`<h1>Sessions</h1>
        <p class="muted">Every sign-in of your account (the console and the API's session tokens), newest first.</p>
        <table class="responsive">
          <thead><tr><th>Signed in</th><th>From</th><th>Browser or client</th><th>Expires</th><th></th></tr></thead>
          <tbody>
            ${sessions.map(
              (s) => html`<tr data-testid="session">
                <td data-label="Signed in">${time(s.created_at)}</td>
                <td data-label="From">${s.ip ?? "—"}</td>
                <td data-label="Client">${s.user_agent ?? "—"}</td>
                <td data-label="Expires">${time(s.expires_at)}</td>
                <td>${s.id === user.session.id ? html`<span class="badge ok">this one</span>` : ""}</td>
              </tr>`,
            )}
          </tbody>
        </table>
        <h2>Sign out everywhere</h2>
        <p>Ends every sign-in of the account, this one included. API keys are not affected.</p>
        <form method="post" action="/console/sessions/end-all" data-confirm="End every sign-in of this account, this one included?">
          ${csrfField(user)}<button type="submit" class="danger">End all sessions</button>
        </form>`,
    });
  });

  app.post("/sessions/end-all", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    await deps.accounts.revokeAllSessions(user.account.id);
    appendCookie(reply, clearCookie(request, SESSION_COOKIE));
    return redirect(request, reply, "/console/signin", { kind: "ok", text: "Every session was ended." });
  });
}
