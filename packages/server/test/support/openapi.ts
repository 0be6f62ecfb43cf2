/**
 * Reading the app's own OpenAPI document in tests: its operations, the response schema that
 * documents a given status, and validators for those schemas (Ajv in JSON Schema 2020-12 mode, the
 * dialect of OpenAPI 3.1).
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

export type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: JsonSchema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  security?: unknown[];
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface Operation {
  method: string;
  path: string;
  operation: OpenApiOperation;
}

export function operations(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );
}

/** The JSON schema documenting `status`: the exact code, else its range (`4XX`), else `default`. */
export function responseSchema(operation: OpenApiOperation, status: number): JsonSchema | undefined {
  const responses = operation.responses;
  const range = `${String(status)[0]}XX`;
  const response =
    responses[String(status)] ?? responses[range] ?? responses[range.toLowerCase()] ?? responses["default"];
  return response?.content?.["application/json"]?.schema;
}

const DATA_KEYWORDS = new Set(["const", "enum", "default", "example", "examples"]);

/**
 * A copy of `schema` in which every object that lists its properties accepts no other: an answer or
 * example with an undeclared field fails instead of passing silently (fast-json-stringify would drop
 * the field, so the API never sends it). `unevaluatedProperties` sees through anyOf/allOf branches.
 */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    // These hold data, not schemas; `properties` maps names to schemas, walked like any other.
    copy[key] = DATA_KEYWORDS.has(key)
      ? value
      : key === "properties" && value && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, closed(sub)]))
        : closed(value);
  }
  if (
    copy["properties"] !== undefined &&
    copy["additionalProperties"] === undefined &&
    copy["patternProperties"] === undefined &&
    copy["unevaluatedProperties"] === undefined
  ) {
    copy["unevaluatedProperties"] = false;
  }
  return copy;
}

export class SchemaValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  /** Ajv's errors for `value` against `schema` (compiled once per schema object); [] when valid. */
  errors(schema: JsonSchema, value: unknown): ErrorObject[] {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate(value) ? [] : [...(validate.errors ?? [])];
  }
}

export function describeErrors(errors: readonly ErrorObject[]): string[] {
  return errors.map(
    (error) => `${error.instancePath || "/"} ${error.message ?? ""} ${JSON.stringify(error.params)}`,
  );
}
