/**
 * The envelope and the error catalog: every failure a client can provoke comes back as
 * `{success:false, error:{code, message, details?}}` with the right status and an X-Request-Id,
 * never a bare framework error or a stack trace.
 */
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError, ERROR_CATALOG } from "../../src/http/errors";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await createTestApp({
    config: { bodyLimitBytes: 2048 },
    register: (app) => {
      app.get(
        "/v1/_probe/query",
        {
          config: { auth: "key", permission: "read" },
          schema: {
            querystring: Type.Object(
              {
                limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
                side: Type.Optional(Type.Union([Type.Literal("buy"), Type.Literal("sell")])),
              },
              { additionalProperties: false },
            ),
          },
        },
        async (request) => ({ success: true, data: request.query }),
      );
      app.post(
        "/v1/_probe/body",
        {
          config: { auth: "key", permission: "read" },
          schema: {
            body: Type.Object(
              { name: Type.String({ minLength: 1 }), amount: Type.Number({ exclusiveMinimum: 0 }) },
              { additionalProperties: false },
            ),
          },
        },
        async (request) => ({ success: true, data: request.body }),
      );
      app.get("/v1/_probe/crash", { config: { auth: "none" } }, async () => {
        throw new Error("secret internal detail: db password hunter2");
      });
      app.get("/v1/_probe/app-error", { config: { auth: "none" } }, async () => {
        throw new AppError("ORDER_NOT_CANCELLABLE", undefined, { order_id: "ord_1", status: "filled" });
      });
    },
  });
  const { session } = await signup(t.app);
  key = (await createKey(t.app, session, { type: "read_only" })).key;
});

afterAll(() => t.close());

describe("error envelope", () => {
  it("answers an unknown route with 404 NOT_FOUND", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/nope" });
    expectError(response, 404, "NOT_FOUND");
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const response = await t.app.inject({ method: "PUT", url: "/v1/api-keys" });
    const error = expectError(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers["allow"]).toBe("GET, POST");
    expect(error.details).toEqual({ allowed: ["GET", "POST"] });
  });

  it("rejects malformed JSON with VALIDATION_ERROR naming the body", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/_probe/body",
      headers: { ...bearer(key), "content-type": "application/json" },
      payload: '{"name": "x", ',
    });
    const error = expectError(response, 400, "VALIDATION_ERROR");
    expect(error.details).toEqual({ fields: { body: "is not valid JSON" } });
  });

  it("names every bad field, including unknown ones", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/_probe/body",
      headers: bearer(key),
      payload: { amount: -1, colour: "red" },
    });
    const error = expectError(response, 400, "VALIDATION_ERROR");
    expect(error.details?.["fields"]).toMatchObject({
      "body.name": "is required",
      "body.colour": "is not an accepted field",
      "body.amount": expect.stringContaining("> 0"),
    });
  });

  it("rejects out-of-range and unknown query values", async () => {
    const tooBig = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/query?limit=500",
      headers: bearer(key),
    });
    expect(expectError(tooBig, 400, "VALIDATION_ERROR").details).toEqual({
      fields: { "query.limit": "must be <= 100" },
    });
    const notNumber = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/query?limit=abc",
      headers: bearer(key),
    });
    expect(expectError(notNumber, 400, "VALIDATION_ERROR").details?.["fields"]).toHaveProperty("query.limit");
    const badEnum = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/query?side=up",
      headers: bearer(key),
    });
    expect(expectError(badEnum, 400, "VALIDATION_ERROR").details?.["fields"]).toHaveProperty("query.side");
    const unknown = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/query?colour=red",
      headers: bearer(key),
    });
    expect(expectError(unknown, 400, "VALIDATION_ERROR").details).toEqual({
      fields: { "query.colour": "is not an accepted field" },
    });
    const good = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/query?limit=5&side=buy",
      headers: bearer(key),
    });
    expect(good.json()).toEqual({ success: true, data: { limit: 5, side: "buy" } });
  });

  it("rejects an oversized body with 413 PAYLOAD_TOO_LARGE", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/_probe/body",
      headers: bearer(key),
      payload: { name: "x".repeat(5000), amount: 1 },
    });
    expectError(response, 413, "PAYLOAD_TOO_LARGE");
  });

  it("rejects a non-JSON body with 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/_probe/body",
      headers: { ...bearer(key), "content-type": "text/plain" },
      payload: "name=x",
    });
    expectError(response, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("rejects an empty JSON body", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/_probe/body",
      headers: { ...bearer(key), "content-type": "application/json" },
    });
    expectError(response, 400, "VALIDATION_ERROR");
  });

  it("hides internals on a 500", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/_probe/crash" });
    const error = expectError(response, 500, "INTERNAL_ERROR");
    expect(response.body).not.toContain("hunter2");
    expect(response.body).not.toContain("at ");
    expect(error.details).toBeUndefined();
  });

  it("renders catalog errors with their details", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/_probe/app-error" });
    expect(expectError(response, 409, "ORDER_NOT_CANCELLABLE").details).toEqual({
      order_id: "ord_1",
      status: "filled",
    });
  });

  it("gives 401 before 400: an anonymous bad request is unauthorized", async () => {
    const response = await t.app.inject({ method: "POST", url: "/v1/_probe/body", payload: { nope: 1 } });
    expectError(response, 401, "UNAUTHORIZED");
  });
});

describe("request ids", () => {
  it("sets X-Request-Id on success and error responses", async () => {
    const ok = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(ok.headers["x-request-id"]).toMatch(/^req_[0-9A-Z]{26}$/);
    const notFound = await t.app.inject({ method: "GET", url: "/missing" });
    expect(notFound.headers["x-request-id"]).toMatch(/^req_/);
    expect(notFound.headers["x-request-id"]).not.toBe(ok.headers["x-request-id"]);
  });

  it("keeps a well-formed incoming request id and replaces a bad one", async () => {
    const kept = await t.app.inject({
      method: "GET",
      url: "/healthz",
      headers: { "x-request-id": "trace-abc.123" },
    });
    expect(kept.headers["x-request-id"]).toBe("trace-abc.123");
    const replaced = await t.app.inject({
      method: "GET",
      url: "/healthz",
      headers: { "x-request-id": "bad id\twith space" },
    });
    expect(replaced.headers["x-request-id"]).toMatch(/^req_/);
  });
});

describe("the catalog", () => {
  it("maps every code to a 4xx/5xx status and a message", () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.message.length, code).toBeGreaterThan(0);
    }
    expect(ERROR_CATALOG.UNAUTHORIZED.status).toBe(401);
    expect(ERROR_CATALOG.FORBIDDEN.status).toBe(403);
    expect(ERROR_CATALOG.ORDER_NOT_FOUND.status).toBe(404);
    expect(ERROR_CATALOG.MARKET_NOT_FOUND.status).toBe(404);
    expect(ERROR_CATALOG.ORDER_NOT_CANCELLABLE.status).toBe(409);
    expect(ERROR_CATALOG.RATE_LIMITED.status).toBe(429);
    expect(ERROR_CATALOG.PAYLOAD_TOO_LARGE.status).toBe(413);
    expect(ERROR_CATALOG.UNSUPPORTED_MEDIA_TYPE.status).toBe(415);
    expect(ERROR_CATALOG.INTERNAL_ERROR.status).toBe(500);
  });
});
