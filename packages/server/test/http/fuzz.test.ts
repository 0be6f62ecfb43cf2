/**
 * Every answer is the envelope. A seeded fuzzer sends each operation of the live OpenAPI document
 * long, odd and malformed path parameters, queries, bodies, content types, methods and credentials,
 * and checks every answer: JSON with an X-Request-Id, never a 5xx, and either the documented success
 * body (the `{success:true, data}` envelope on every /v1 route but the document itself) or
 * `{success:false, error:{code, message}}` whose code is in the catalog with the answer's status.
 *
 * The seed is printed and named in every failure; `FUZZ_SEED=<n>` replays a run. CI uses a fixed
 * seed, so a submission is judged on the same requests every time; elsewhere each run draws one.
 */
import { Rng } from "@crossbook/fakes/random";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG } from "../../src/http/errors";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import {
  closed,
  describeErrors,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiOperation,
  type OpenApiParameter,
  type Operation,
  operations,
  responseSchema,
  SchemaValidator,
} from "../support/openapi";

const CI_SEED = 20261127;
const SEED = process.env["FUZZ_SEED"]
  ? Number(process.env["FUZZ_SEED"])
  : process.env["CI"]
    ? CI_SEED
    : Math.floor(Math.random() * 2 ** 31);
/** Requests per operation; ~50 operations make this a few seconds. */
const VARIANTS = 14;

/** The fakes' seeded mulberry32 (a seed of 0 kept as 0): the same seed gives the same run. */
class Random extends Rng {
  constructor(seed: number) {
    super(seed, 0);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Characters from plain ASCII to the awkward: accents, CJK, emoji, RTL override, zero width. */
const CHARS = [
  ..."abcXYZ019-_.~:/ ",
  "é",
  "ß",
  "漢",
  "🙂",
  "\u202e",
  "\u0301",
  "\u200b",
  "\t",
  "'",
  '"',
  "<",
];

function text(r: Random, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += r.pick(CHARS);
  return out;
}

/** A path segment as it goes on the wire (already percent-encoded where it should be). */
const PATH_VALUES: ReadonlyArray<(r: Random) => string> = [
  () => "ord_01M8EJZ0D203ACBY1BBD1GA83S",
  () => "kalshi:KXFED-26DEC-T4.00",
  () => `polymarket:0x${"ab".repeat(32)}`,
  (r) => encodeURIComponent(text(r, r.int(1, 40))),
  (r) => "a".repeat(r.int(95, 105)),
  (r) => "x".repeat(r.int(200, 6000)),
  (r) => encodeURIComponent("é".repeat(r.int(30, 80))),
  () => "",
  () => "%zz",
  () => "%",
  () => "%E0%A4%A",
  () => "%C0%AF",
  () => "%ED%A0%80",
  () => "%FF",
  () => ".",
  () => "..",
  () => "..%2F..%2Fetc%2Fpasswd",
  () => "%2F",
  () => "a%2Fb",
  () => "%00",
  () => "%0D%0ASet-Cookie:%20x=1",
  () => "-1",
  () => "1e309",
  () => encodeURIComponent("' OR 1=1 --"),
  () => "%25",
  () => "a;b=c",
  () => "%20",
];

const ODD_NUMBERS = [
  "1e309",
  "-1e309",
  "Infinity",
  "-Infinity",
  "NaN",
  "-0",
  "9".repeat(400),
  "0x10",
  "1.5",
  "-1",
  "1e-400",
];
const ODD_QUERY_PARTS = [
  "unknown=1",
  "__proto__=1",
  "constructor=x",
  "__proto__[x]=1",
  "=x",
  "&&",
  "a=b=c",
  "%zz=1",
];

/** A value that the schema plausibly accepts (enum members, numbers in range, strings of its length). */
function sample(schema: unknown, r: Random, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 6) return null;
  const s = schema as JsonSchema;
  if (s["const"] !== undefined) return s["const"];
  if (Array.isArray(s["enum"])) return r.pick(s["enum"]);
  if (Array.isArray(s["anyOf"])) return sample(r.pick(s["anyOf"]), r, depth + 1);
  if (s["default"] !== undefined && r.chance(0.2)) return s["default"];
  const type = Array.isArray(s["type"]) ? r.pick(s["type"] as string[]) : s["type"];
  const num = (key: string, fallback: number) => (typeof s[key] === "number" ? (s[key] as number) : fallback);
  switch (type) {
    case "string": {
      if (s["format"] === "date-time")
        return new Date(Date.UTC(2026, 10, 22) + r.int(-1e9, 1e9)).toISOString();
      const min = num("minLength", 0);
      return text(r, r.int(min, Math.min(num("maxLength", min + 30), min + 30)));
    }
    case "integer": {
      const min = num("minimum", -5);
      return r.int(min, Math.min(num("maximum", min + 1000), min + 1000));
    }
    case "number": {
      const min = num("minimum", 0);
      return min + r.next() * (Math.min(num("maximum", min + 100), min + 100) - min);
    }
    case "boolean":
      return r.chance(0.5);
    case "array": {
      const min = num("minItems", 0);
      const length = r.int(min, Math.min(num("maxItems", min + 3), min + 3));
      return Array.from({ length }, () => sample(s["items"], r, depth + 1));
    }
    case "object": {
      const properties = (s["properties"] ?? {}) as Record<string, unknown>;
      const required = new Set((s["required"] ?? []) as string[]);
      const out: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(properties)) {
        if (required.has(name) || r.chance(0.5)) out[name] = sample(sub, r, depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}

/** A value of a different kind than the schema wants, somewhere in a plausible one. */
function mistyped(schema: unknown, r: Random): unknown {
  const value = sample(schema, r);
  const wrong = r.pick<unknown>([null, 0, -1, 1e308, "", "x", [], [1, "a"], true, {}, { a: { b: [] } }]);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0) return { ...value, [r.pick(keys)]: wrong };
  }
  return wrong;
}

function queryValue(schema: unknown, r: Random): string {
  const value = sample(schema, r);
  return Array.isArray(value) ? value.join(",") : String(value);
}

function queryString(r: Random, parameters: OpenApiParameter[]): string {
  const parts: string[] = [];
  for (const { name, schema } of parameters.filter((p) => p.in === "query")) {
    if (r.chance(0.35)) continue;
    switch (r.int(0, 9)) {
      case 0:
      case 1:
      case 2:
      case 3:
        parts.push(`${name}=${encodeURIComponent(queryValue(schema, r))}`);
        break;
      case 4:
        parts.push(`${name}=${encodeURIComponent(r.pick(ODD_NUMBERS))}`);
        break;
      case 5:
        parts.push(`${name}=${encodeURIComponent(queryValue(schema, r))}`, `${name}=${r.pick(ODD_NUMBERS)}`);
        break;
      case 6:
        parts.push(`${name}[]=1`, `${name}[0]=x`);
        break;
      case 7:
        parts.push(r.chance(0.5) ? `${name}=` : name);
        break;
      case 8:
        parts.push(`${name}=${"q".repeat(r.int(1000, 12000))}`);
        break;
      default:
        parts.push(`${name}=${r.pick(["%zz", "%", "%E0%A4%A", encodeURIComponent(text(r, 12))])}`);
    }
  }
  if (r.chance(0.15)) parts.push(r.pick(ODD_QUERY_PARTS));
  if (parts.length === 0) return r.chance(0.1) ? "?" : "";
  return `?${parts.join("&")}`;
}

interface Body {
  payload?: string;
  contentType?: string;
  description: string;
}

function deeplyNested(r: Random): string {
  const depth = r.int(1000, 20000);
  return r.chance(0.5)
    ? "[".repeat(depth) + "]".repeat(depth)
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

function body(r: Random, schema: unknown): Body {
  const json = (value: unknown, description: string): Body => ({
    payload: JSON.stringify(value),
    contentType: "application/json",
    description,
  });
  switch (r.int(0, 11)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return json(sample(schema, r), "plausible");
    case 4:
      return json(mistyped(schema, r), "mistyped");
    case 5:
      return json(r.pick<unknown>([null, 0, -1, "", "x", [], [1, 2], true, {}]), "not an object");
    case 6:
      return { payload: deeplyNested(r), contentType: "application/json", description: "deeply nested" };
    case 7:
      return json(
        { ...(sample(schema, r) as object), name: "x".repeat(r.pick([20_000, 300_000, 1_100_000])) },
        "huge string",
      );
    case 8:
      return {
        payload: r.pick([
          "{",
          '{"a":}',
          "nul",
          "{'a':1}",
          "\u0000",
          "[1,]",
          '{"a":1}}',
          "1e99999",
          '{"a":1e400}',
          "\ufeff{}",
        ]),
        contentType: "application/json",
        description: "invalid or odd JSON",
      };
    case 9:
      return {
        payload: r.pick(['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']),
        contentType: "application/json",
        description: "prototype keys",
      };
    case 10:
      return {
        payload: JSON.stringify(sample(schema, r)),
        contentType: r.pick([
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/xml",
          "application/json; charset=utf-16",
          "application/jsonx",
          "*/*",
          ";;",
        ]),
        description: "other content type",
      };
    default:
      return r.chance(0.5)
        ? { payload: "", contentType: "application/json", description: "empty JSON body" }
        : { payload: JSON.stringify(sample(schema, r)), description: "no content type" };
  }
}

const OTHER_METHODS = [
  "GET",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "HEAD",
  "PROPFIND",
  "TRACE",
] as const;

interface Credentials {
  key: string;
  session: string;
}

function authorization(
  r: Random,
  credentials: Credentials,
): { header: Record<string, string>; description: string } {
  switch (r.int(0, 9)) {
    case 0:
      return { header: {}, description: "no credentials" };
    case 1:
      return { header: bearer(credentials.session), description: "session token" };
    case 2:
      return { header: bearer(`cb_live_${"0".repeat(40)}`), description: "unknown key" };
    case 3:
      return {
        header: {
          authorization: r.pick([
            "Bearer",
            "Basic dXNlcjpwYXNz",
            "bearer  x",
            `Bearer ${"x".repeat(5000)}`,
            "Bearer é",
            "Bearer cb_test_%zz",
          ]),
        },
        description: "malformed credentials",
      };
    default:
      return { header: bearer(credentials.key), description: "valid key" };
  }
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  description: string;
}

function request(r: Random, { method, path, operation }: Operation, credentials: Credentials): FuzzRequest {
  const parameters = operation.parameters ?? [];
  const url = path.replace(/\{([^}]+)\}/g, () => r.pick(PATH_VALUES)(r)) + queryString(r, parameters);
  const chosenMethod = r.chance(0.85) ? method : r.pick(OTHER_METHODS);
  const auth = authorization(r, credentials);
  const headers: Record<string, string> = { ...auth.header };
  const notes = [auth.description];
  if (r.chance(0.1)) headers["x-request-id"] = r.pick(["", "a b", "x".repeat(500), "ok-id.1", "\u00e9"]);
  if (parameters.some((p) => p.in === "header" && p.name === "idempotency-key") && r.chance(0.6)) {
    headers["idempotency-key"] = r.pick(["k-1", "", "x".repeat(300), encodeURIComponent(text(r, 8))]);
  }
  const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
  let payload: string | undefined;
  if (chosenMethod !== "GET" && chosenMethod !== "HEAD" && (bodySchema || r.chance(0.2))) {
    const b = body(r, bodySchema);
    payload = b.payload;
    if (b.contentType !== undefined) headers["content-type"] = b.contentType;
    notes.push(b.description);
  } else if (chosenMethod === "GET" && r.chance(0.1)) {
    payload = "{bad";
    headers["content-type"] = "application/json";
    notes.push("body on GET");
  }
  return {
    method: chosenMethod,
    url,
    headers,
    ...(payload === undefined ? {} : { payload }),
    description: notes.join(", "),
  };
}

const validator = new SchemaValidator();
const closedSchemas = new WeakMap<object, JsonSchema>();

function closedSchema(schema: JsonSchema): JsonSchema {
  let done = closedSchemas.get(schema);
  if (!done) {
    done = closed(schema) as JsonSchema;
    closedSchemas.set(schema, done);
  }
  return done;
}

/** What is wrong with an answer; [] when it is a proper envelope (or the documented body). */
function problemsOf(
  response: LightMyRequestResponse,
  method: string,
  path: string,
  operation?: OpenApiOperation,
): string[] {
  const status = response.statusCode;
  const problems: string[] = [];
  if (!Number.isInteger(status) || status < 200 || status > 599) problems.push(`status ${status}`);
  if (status >= 500) problems.push(`a ${status}`);
  if (!response.headers["x-request-id"]) problems.push("no X-Request-Id");
  if (!String(response.headers["content-type"] ?? "").startsWith("application/json")) {
    problems.push(`content-type ${response.headers["content-type"]}`);
  }
  if (method === "HEAD") return problems;
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return [...problems, `body is not JSON: ${response.body.slice(0, 200)}`];
  }
  const envelope = body as {
    success?: unknown;
    data?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  if (status >= 400) {
    const code = envelope.error?.code;
    const entry = typeof code === "string" ? ERROR_CATALOG[code as keyof typeof ERROR_CATALOG] : undefined;
    if (envelope.success !== false || !entry) problems.push(`not the error envelope with a catalog code`);
    else if (entry.status !== status)
      problems.push(`${String(code)} is a ${entry.status}, answered ${status}`);
    if (typeof envelope.error?.message !== "string" || envelope.error.message.length === 0) {
      problems.push("error without a message");
    }
  } else if (path.startsWith("/v1/") && path !== "/v1/openapi.json") {
    if (envelope.success !== true || !("data" in envelope)) problems.push("not the success envelope");
  }
  // And the body is what the document says for this status (undeclared fields included).
  const schema = operation ? responseSchema(operation, status) : undefined;
  if (operation && method === "GET" && !schema && status < 400) problems.push(`no documented ${status} body`);
  if (schema) problems.push(...describeErrors(validator.errors(closedSchema(schema), body)));
  return problems;
}

function errorCode(response: LightMyRequestResponse): string {
  if (response.statusCode < 400) return "";
  try {
    return String((JSON.parse(response.body) as { error?: { code?: unknown } }).error?.code ?? "");
  } catch {
    return "";
  }
}

let t: TestApp;
let document: OpenApiDocument;
let credentials: Credentials;
let logoutCredentials: Credentials;

beforeAll(async () => {
  t = await createTestApp();
  const { accountId, session } = await signup(t.app);
  // Enough budget that the fuzz reaches the handlers instead of the rate limiter.
  await setAccount(t.services, accountId, {
    tier: "enterprise",
    rate_limit_per_minute: 1_000_000,
    agent_rate_limit_per_minute: 1_000_000,
  });
  const key = (await createKey(t.app, session, { type: "admin", environment: "sandbox" })).key;
  credentials = { key, session };
  logoutCredentials = { key, session: (await signup(t.app)).session };
  document = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
  console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
});
afterAll(() => t.close());

describe(`fuzzing every operation of the OpenAPI document (seed ${SEED})`, () => {
  it("answers every request with the envelope, never a 5xx", async () => {
    const all = operations(document);
    expect(all.length).toBeGreaterThan(40);
    const r = new Random(SEED);
    const failures: string[] = [];
    const answers = new Map<string, number>();
    for (const op of all) {
      for (let i = 0; i < VARIANTS; i++) {
        // Logging out ends the session it is sent with: that operation gets a session of its own.
        const req = request(r, op, op.path === "/v1/auth/logout" ? logoutCredentials : credentials);
        const response = await t.app.inject({
          method: req.method as "GET",
          url: req.url,
          headers: req.headers,
          // Many callers, so the per-address guard on failed authentications rarely stands in front.
          remoteAddress: `127.0.${r.int(0, 255)}.${r.int(1, 254)}`,
          ...(req.payload === undefined ? {} : { payload: req.payload }),
        });
        const label = `${response.statusCode} ${errorCode(response)}`.trim();
        answers.set(label, (answers.get(label) ?? 0) + 1);
        // The operation that answered: the one fuzzed, when the method is its own and no dot
        // segment ("." or "..") moved the request to another route (/v1/orders/../fills is /v1/fills).
        const resolved = new URL(req.url, "http://fuzz").pathname === req.url.split("?")[0];
        const answering = req.method === op.method && resolved ? op.operation : undefined;
        const problems = problemsOf(response, req.method, op.path, answering);
        if (problems.length > 0) {
          failures.push(
            `[seed ${SEED}] ${op.method} ${op.path}: ${req.method} ${req.url.slice(0, 160)} (${req.description})` +
              ` → ${response.statusCode} ${response.body.slice(0, 200)}: ${problems.join("; ")}`,
          );
        }
      }
    }
    console.log("fuzz answers:", Object.fromEntries([...answers].sort()));
    expect({ failures: failures.length, first: failures.slice(0, 15) }).toEqual({ failures: 0, first: [] });
    // The fuzz reached past the front door: successes, validation errors and not-founds all occur.
    const labels = [...answers.keys()];
    expect(labels.some((label) => label.startsWith("2"))).toBe(true);
    expect(labels).toContain("400 VALIDATION_ERROR");
    expect(labels.some((label) => label.startsWith("404"))).toBe(true);
  });
});
