/**
 * The OpenAPI document: valid OpenAPI 3.1, describing every route with its envelope and errors,
 * served at /v1/openapi.json, and identical to the committed packages/server/openapi.json (so a
 * change to a route that forgets to regenerate it fails here: `npm run openapi`).
 */
import fs from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateOpenApi } from "../../src/openapi";
import { createTestApp, type TestApp } from "../support/app";

const COMMITTED = path.resolve(__dirname, "../../openapi.json");

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("OpenAPI", () => {
  it("serves a valid OpenAPI 3.1 document", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/openapi.json" });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("describes the envelope, the errors and the bearer auth of every API route", async () => {
    const document = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    type Operation = {
      responses: Record<
        string,
        { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
      >;
      security?: unknown;
    };
    const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(
      ([p, methods]) => Object.entries(methods).map(([method, op]) => ({ path: p, method, op })),
    );
    const api = operations.filter((o) => o.path.startsWith("/v1/") && o.path !== "/v1/openapi.json");
    expect(api.length).toBeGreaterThanOrEqual(8);
    for (const { path: p, method, op } of api) {
      expect(
        op.responses["4XX"]?.content?.["application/json"]?.schema?.properties?.error,
        `${method} ${p}`,
      ).toBeDefined();
      if (p === "/v1/prices/stream" || p === "/v1/account/stream") {
        // The WebSockets: their success is the protocol switch (no JSON body); a plain GET is a 426.
        expect(op.responses["426"], `${method} ${p}`).toBeDefined();
        continue;
      }
      const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"));
      expect(success, `${method} ${p}`).toBeDefined();
      expect(
        success![1].content?.["application/json"]?.schema?.properties?.["success"],
        `${method} ${p}`,
      ).toBeDefined();
      const isPublic = p === "/v1/auth/signup" || p === "/v1/auth/login";
      expect(Boolean(op.security), `${method} ${p}`).toBe(!isPublic);
    }
  });

  it("matches the committed openapi.json (run `npm run openapi` after changing a route)", async () => {
    const generated = await generateOpenApi();
    const committed = JSON.parse(fs.readFileSync(COMMITTED, "utf8"));
    expect(generated).toEqual(committed);
  });

  it("renders the documentation page at /docs without a key", async () => {
    const response = await t.app.inject({ method: "GET", url: "/docs/" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toContain("text/html");
  });
});
