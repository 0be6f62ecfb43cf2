/**
 * The spec's response envelope (part 2.1) as TypeBox schemas. Every route declares its success
 * body through these helpers, so serialization drops anything undeclared and the OpenAPI document
 * shows the exact shape.
 */
import { type TSchema, Type } from "typebox";

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String({ description: "Stable machine code, e.g. VALIDATION_ERROR" }),
      message: Type.String(),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { description: "Error envelope" },
);

/** `schema` or null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data });
}

export const PageMeta = Type.Object({
  page: Type.Integer({ description: "1-based page number: offset / limit + 1" }),
  limit: Type.Integer(),
  total: Type.Integer({ description: "Items matching the filters, over all pages" }),
});

export function PagedEnvelope<T extends TSchema, M extends TSchema>(item: T, meta: M) {
  return Type.Object({ success: Type.Literal(true), data: Type.Array(item), meta });
}

/** Standard error responses every route may return; added to each route's schema. */
export const COMMON_ERROR_RESPONSES = {
  "4xx": ErrorBody,
  "5xx": ErrorBody,
} as const;

export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

export function pageMeta(offset: number, limit: number, total: number) {
  return { page: Math.floor(offset / limit) + 1, limit, total };
}

/** A string restricted to `values`, typed as their union (`{type: "string", enum: [...]}`). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}
