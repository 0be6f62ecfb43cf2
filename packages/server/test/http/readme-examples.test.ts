/**
 * Every JSON response example in README.md round-trips through the OpenAPI document: it validates
 * against the response schema of the operation it illustrates (JSON Schema 2020-12, as OpenAPI 3.1
 * uses), and names no field that schema leaves out (serialization would drop it, so the README
 * would promise a field the API never sends).
 *
 * Examples are the ```json blocks that are envelopes and the `# -> {…}` answers in shell blocks.
 * An example may elide with `…`: inside a string it is just text ("wh_…"), as a value (`"url":…`)
 * or as an array of prose (`[…two legs…]`) it stands for a value that is not checked; everything
 * around it is (a field left out entirely is still missing).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../support/app";
import {
  closed,
  describeErrors,
  type JsonSchema,
  type OpenApiDocument,
  responseSchema,
  SchemaValidator,
} from "../support/openapi";

const README = path.resolve(__dirname, "../../../../README.md");

/**
 * Which operation and status each example shows, by the README section (`## …`) it sits in and its
 * place there. A new example needs a line here; the first test fails until it has one.
 */
const EXAMPLES: Record<string, { method: string; path: string; status: number }> = {
  "Markets and venues #1": { method: "get", path: "/v1/markets", status: 200 },
  "Current prices #1": { method: "get", path: "/v1/prices", status: 200 },
  "Price history #1": { method: "get", path: "/v1/prices/history", status: 200 },
  "Comparing prices and arbitrage #1": { method: "get", path: "/v1/prices/compare", status: 200 },
  "Arbitrage scanner #1": { method: "get", path: "/v1/arbitrage", status: 200 },
  "Events #1": { method: "get", path: "/v1/account/events", status: 200 },
  "Webhooks #1": { method: "post", path: "/v1/webhooks", status: 200 },
};

interface Example {
  id: string;
  line: number;
  text: string;
}

/** The response examples of a Markdown document, named `<section> #<n>`. */
function responseExamples(markdown: string): Example[] {
  const lines = markdown.split("\n");
  const examples: Example[] = [];
  const perSection = new Map<string, number>();
  const add = (section: string, line: number, text: string) => {
    const n = (perSection.get(section) ?? 0) + 1;
    perSection.set(section, n);
    examples.push({ id: `${section} #${n}`, line, text });
  };
  let section = "";
  let fence: { lang: string; start: number; body: string[] } | null = null;
  for (const [index, line] of lines.entries()) {
    const marker = /^```(\w*)/.exec(line);
    if (fence === null) {
      if (line.startsWith("## ")) section = line.slice(3).trim();
      if (marker) fence = { lang: marker[1] ?? "", start: index + 1, body: [] };
      continue;
    }
    if (!marker) {
      fence.body.push(line);
      continue;
    }
    if (fence.lang === "json") {
      const text = fence.body.join("\n");
      if (text.includes('"success"')) add(section, fence.start + 1, text);
    } else {
      // `# -> {...}` answers in shell blocks, continued on `#   ...` lines; `<- note` is a remark.
      for (let i = 0; i < fence.body.length; i++) {
        const first = /^#\s*->\s*(\{.*)$/.exec(fence.body[i]!);
        if (!first) continue;
        const parts = [first[1]!];
        while (i + 1 < fence.body.length && /^#\s{2,}\S/.test(fence.body[i + 1]!)) {
          parts.push(fence.body[++i]!.replace(/^#\s+/, ""));
        }
        add(section, fence.start + 1 + i, parts.map((part) => part.replace(/\s<-.*$/, "")).join(" "));
      }
    }
    fence = null;
  }
  return examples;
}

const ELIDED = "\u0000elided";

/** Parses an example, replacing each elision outside strings by the ELIDED marker. */
function parseExample(text: string): unknown {
  const marker = JSON.stringify(ELIDED);
  let json = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      json += c;
      if (c === "\\") json += text[++i] ?? "";
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      json += c;
    } else if (c === "[") {
      const close = text.indexOf("]", i);
      const inner = close === -1 ? "" : text.slice(i + 1, close);
      if (inner.includes("…") && !/["[\]{}]/.test(inner)) {
        json += marker;
        i = close;
      } else {
        json += c;
      }
    } else if (c === "…") {
      json += marker;
    } else {
      json += c;
    }
  }
  return JSON.parse(json);
}

/** A copy of `schema` in which every value position also accepts the ELIDED marker. */
function elidable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(elidable);
  if (schema === null || typeof schema !== "object") return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" || key === "patternProperties") {
      copy[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, sub]) => [name, orElided(elidable(sub))]),
      );
    } else if (key === "items" || key === "additionalProperties") {
      copy[key] = typeof value === "object" ? orElided(elidable(value)) : value;
    } else if (key === "prefixItems") {
      copy[key] = (value as unknown[]).map((sub) => orElided(elidable(sub)));
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") {
      copy[key] = (value as unknown[]).map(elidable);
    } else {
      copy[key] = value;
    }
  }
  return copy;
}

function orElided(schema: unknown): JsonSchema {
  return { anyOf: [{ const: ELIDED }, schema] };
}

/** Schema errors of `value`, without the noise of the ELIDED alternatives. */
function problems(validator: SchemaValidator, schema: JsonSchema, value: unknown): string[] {
  const errors = validator
    .errors(schema, value)
    .filter((error) => !(error.keyword === "const" && error.params["allowedValue"] === ELIDED));
  return describeErrors(errors);
}

let t: TestApp;
let document: OpenApiDocument;
const validator = new SchemaValidator();
const examples = responseExamples(fs.readFileSync(README, "utf8"));

function schemaFor(id: string): JsonSchema {
  const target = EXAMPLES[id];
  if (!target) throw new Error(`README example "${id}" is not mapped to an operation in EXAMPLES`);
  const operation = document.paths[target.path]?.[target.method];
  if (!operation) throw new Error(`${target.method.toUpperCase()} ${target.path} is not in the document`);
  const schema = responseSchema(operation, target.status);
  if (!schema) throw new Error(`${target.method} ${target.path} documents no ${target.status} JSON body`);
  return elidable(closed(schema)) as JsonSchema;
}

beforeAll(async () => {
  t = await createTestApp();
  document = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
});
afterAll(() => t.close());

describe("README response examples", () => {
  it("are all found and each is mapped to the operation it shows", () => {
    expect(examples.map((example) => example.id).sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  it.each(examples.map((example) => [example.id, example] as const))(
    "%s matches the documented response schema",
    (_id, example) => {
      expect(
        problems(validator, schemaFor(example.id), parseExample(example.text)),
        `README.md line ${example.line}`,
      ).toEqual([]);
    },
  );

  it("would catch an undeclared field, a wrong type and a missing field", () => {
    const prices = examples.find((example) => example.id === "Current prices #1")!;
    const schema = schemaFor(prices.id);
    const value = parseExample(prices.text);
    const entry = () => structuredClone(value) as { data: Record<string, Record<string, unknown>> };
    const withExtra = entry();
    withExtra.data["kalshi:KXFED-26DEC-C25"]!["mid"] = 0.42;
    const wrongType = entry();
    wrongType.data["kalshi:KXFED-26DEC-C25"]!["price"] = "0.42";
    const missing = entry();
    delete missing.data["kalshi:KXFED-26DEC-C25"]!["updated_at"];
    for (const broken of [withExtra, wrongType, missing]) {
      expect(problems(validator, schema, broken).join("\n")).toContain("/data/kalshi:KXFED-26DEC-C25");
    }
  });

  it("reads elisions: a bare …, an array of prose and … inside strings", () => {
    const value = parseExample('{"id":"wh_…","url":…,"events":[…],"legs":[…two legs…],"n":[1]}');
    expect(value).toEqual({ id: "wh_…", url: ELIDED, events: ELIDED, legs: ELIDED, n: [1] });
    const schema = elidable(
      closed({
        type: "object",
        required: ["id", "url", "n"],
        properties: {
          id: { type: "string" },
          url: { type: "string" },
          n: { type: "array", items: { type: "integer" } },
        },
      }),
    ) as JsonSchema;
    // An elided value passes; an undeclared field does not, elided or not.
    expect(problems(validator, schema, { id: "x", url: ELIDED, n: [1] })).toEqual([]);
    expect(problems(validator, schema, { id: "x", url: ELIDED, n: [1], events: ELIDED }).join()).toContain(
      "unevaluatedProperty",
    );
  });
});
