/**
 * Builds a complete crossbook app for route tests, exactly as `serve` does, on the chosen backends,
 * with an injectable clock. Also small helpers to sign up and mint keys through the real API.
 */
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { type BuildOptions, buildApp, type Services } from "../../src/app";
import { type Config, testConfig } from "../../src/config";
import { type Clock, ManualClock } from "../../src/infra/clock";
import { dropSchema } from "../../src/infra/db/store";
import type { Metrics } from "../../src/ops/metrics";
import { createRuntime, type Runtime } from "../../src/runtime";
import type { StreamServer } from "../../src/stream/server";
import { type InfraBackend, POSTGRES_URL, REDIS_URL, type StoreBackend, uniqueName } from "./backends";

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  stream: StreamServer;
  /** The app's Prometheus registry (what `serve` puts on METRICS_LISTEN). */
  metrics: Metrics;
  runtime: Runtime;
  clock: ManualClock;
  close(): Promise<void>;
}

export interface TestAppOptions {
  store?: StoreBackend;
  infra?: InfraBackend;
  clock?: ManualClock;
  config?: Partial<Config>;
  /** Share a PostgreSQL schema / Redis prefix with another TestApp (a second instance). */
  shareWith?: { schema?: string; redisPrefix?: string };
  register?: BuildOptions["register"];
  venues?: BuildOptions["venues"];
  streamOptions?: BuildOptions["streamOptions"];
  webhooks?: BuildOptions["webhooks"];
  /** An instance of a cluster: background work by lease (tests start the cluster jobs themselves). */
  clustered?: boolean;
}

export async function createTestApp(
  options: TestAppOptions = {},
): Promise<TestApp & { schema?: string; redisPrefix: string }> {
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const store = options.store ?? "sqlite";
  const infra = options.infra ?? "memory";
  const schema = store === "postgres" ? (options.shareWith?.schema ?? uniqueName("t")) : undefined;
  const redisPrefix = options.shareWith?.redisPrefix ?? `${uniqueName("cbtest")}:`;
  const config = testConfig({
    ...(store === "postgres" ? { database: { kind: "postgres" as const, url: POSTGRES_URL! } } : {}),
    ...(infra === "redis" ? { redisUrl: REDIS_URL! } : {}),
    ...options.config,
  });
  const runtime = await createRuntime(config, {
    clock: clock as Clock,
    redisPrefix,
    ...(schema ? { store: { schema, poolSize: 4 } } : {}),
  });
  const { app, services, stream, metrics } = await buildApp(runtime, {
    ...(options.register ? { register: options.register } : {}),
    ...(options.venues ? { venues: options.venues } : {}),
    ...(options.streamOptions ? { streamOptions: options.streamOptions } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.clustered ? { clustered: true } : {}),
  });
  const owned = !options.shareWith?.schema;
  return {
    app,
    services,
    stream,
    metrics,
    runtime,
    clock,
    schema,
    redisPrefix,
    async close() {
      await app.close();
      await runtime.close();
      if (schema && owned) await dropSchema(POSTGRES_URL!, schema);
    },
  };
}

let counter = 0;
export const PASSWORD = "correct horse battery staple";

export async function signup(app: FastifyInstance, email = `user${++counter}-${Date.now()}@example.com`) {
  const response = await app.inject({
    method: "POST",
    url: "/v1/auth/signup",
    payload: { email, password: PASSWORD },
  });
  if (response.statusCode !== 201) throw new Error(`signup failed: ${response.statusCode} ${response.body}`);
  const body = response.json();
  return { email, accountId: body.data.account.id as string, session: body.data.session.token as string };
}

export async function createKey(
  app: FastifyInstance,
  session: string,
  body: { name?: string; type: string; permissions?: string[]; environment?: string },
): Promise<{ id: string; key: string; permissions: string[] }> {
  const response = await app.inject({
    method: "POST",
    url: "/v1/api-keys",
    headers: { authorization: `Bearer ${session}` },
    payload: { name: body.name ?? `${body.type} key`, ...body },
  });
  if (response.statusCode !== 201)
    throw new Error(`key creation failed: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** Raises an account's tier/plan directly (operators do this with the CLI). */
export async function setAccount(
  services: Services,
  accountId: string,
  changes: Parameters<Services["accounts"]["update"]>[1],
) {
  return services.accounts.update(accountId, changes);
}

export function bearer(secret: string) {
  return { authorization: `Bearer ${secret}` };
}

/** Asserts the response is the error envelope with this status and code; returns the body. */
export function expectError(response: LightMyRequestResponse, status: number, code: string) {
  const body = response.json();
  if (response.statusCode !== status || body?.success !== false || body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.statusCode} ${response.body}`);
  }
  if (typeof body.error.message !== "string" || body.error.message.length === 0)
    throw new Error("error without message");
  if (!response.headers["x-request-id"]) throw new Error("missing X-Request-Id");
  return body.error as { code: string; message: string; details?: Record<string, unknown> };
}
