/**
 * The OpenAPI document is valid OpenAPI 3.1 as an independent validator judges it: Hyperjump's
 * JSON Schema implementation checks the document against the OAS 3.1 `schema-base` meta-schema,
 * which (unlike the plain `schema` one) also validates every Schema Object in it as JSON Schema
 * 2020-12 with the OAS dialect. A draft-07 construct such as a tuple written as an `items` array
 * fails here. Both the served document and the committed packages/server/openapi.json are checked.
 */
import fs from "node:fs";
import path from "node:path";
import { type OutputUnit, type Validator, validate } from "@hyperjump/json-schema/openapi-3-1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../support/app";

const SCHEMA_BASE = "https://spec.openapis.org/oas/3.1/schema-base";
const COMMITTED = path.resolve(__dirname, "../../openapi.json");

/** The deepest locations in the document that the validator rejects, for a readable failure. */
async function problems(document: unknown): Promise<string[]> {
  const validator = await validate(SCHEMA_BASE);
  const output = validator(document as Parameters<Validator>[0], "BASIC");
  if (output.valid) return [];
  const units: OutputUnit[] = output.errors ?? [];
  const deepest = units.filter(
    (unit) =>
      !units.some(
        (other) => other !== unit && other.instanceLocation.startsWith(`${unit.instanceLocation}/`),
      ),
  );
  return [...new Set(deepest.map((unit) => unit.instanceLocation))].sort();
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("the OpenAPI document, checked by an independent OpenAPI 3.1 validator", () => {
  it("is valid as served at /v1/openapi.json, every schema included", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/openapi.json" });
    expect(response.statusCode).toBe(200);
    expect(await problems(response.json())).toEqual([]);
  });

  it("is valid as committed in packages/server/openapi.json", async () => {
    expect(await problems(JSON.parse(fs.readFileSync(COMMITTED, "utf8")))).toEqual([]);
  });

  it("catches a Schema Object that is not JSON Schema 2020-12 (a tuple as an `items` array)", async () => {
    const document = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: {
        "/p": {
          get: {
            responses: {
              "200": {
                description: "ok",
                content: {
                  "application/json": {
                    schema: { type: "array", items: [{ type: "number" }, { type: "number" }] },
                  },
                },
              },
            },
          },
        },
      },
    };
    expect((await problems(document)).join("\n")).toContain(
      "/paths/~1p/get/responses/200/content/application~1json/schema/items",
    );
  });
});
