/**
 * What every request passes through regardless of route: a request id on every response, the
 * envelope for every error (ours, Fastify's, Ajv's, and unknown ones), 404 for unknown paths and 405
 * (with Allow) for a known path with the wrong method. Nothing here shows internals on a 5xx.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { COMMON_ERROR_RESPONSES } from "./envelope";
import { AppError, validationError } from "./errors";
import { type RouteConfig, routeConfig } from "./route-context";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

declare module "fastify" {
  interface FastifyRequest {
    /** The matched route's config, with its pattern as `url` (undefined for unknown paths). */
    route: RouteConfig | null;
  }
}

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const LOCATION: Record<string, string> = {
  body: "body",
  querystring: "query",
  params: "path",
  headers: "header",
};

/** Turns Ajv's errors into `{ "body.amount": "must be >= 1" }`, one entry per field. */
export function fieldErrors(context: string | undefined, errors: AjvError[]): Record<string, string> {
  const location = LOCATION[context ?? "body"] ?? context ?? "body";
  const fields: Record<string, string> = {};
  for (const error of errors) {
    const pointer = (error.instancePath ?? "")
      .split("/")
      .filter(Boolean)
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
    let message = error.message ?? "is invalid";
    if (error.keyword === "required" && typeof error.params?.["missingProperty"] === "string") {
      pointer.push(error.params["missingProperty"]);
      message = "is required";
    } else if (
      error.keyword === "additionalProperties" &&
      typeof error.params?.["additionalProperty"] === "string"
    ) {
      pointer.push(error.params["additionalProperty"]);
      message = "is not an accepted field";
    } else if (error.keyword === "enum" && Array.isArray(error.params?.["allowedValues"])) {
      message = `must be one of: ${(error.params["allowedValues"] as unknown[]).join(", ")}`;
    } else if (error.keyword === "const" && error.params?.["allowedValue"] !== undefined) {
      message = `must be ${String(error.params["allowedValue"])}`;
    }
    const field = [location, ...pointer].join(".");
    // Unions report one failure per branch; the first reason is the one a person needs.
    if (!(field in fields)) fields[field] = message;
  }
  return fields;
}

/** Maps any thrown error to our catalog. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const err = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(err.validation)) {
    return validationError(fieldErrors(err.validationContext, err.validation));
  }
  switch (err.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return validationError({ body: "is not valid JSON" }, "The request body is not valid JSON");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return validationError({ body: "is empty but Content-Type is application/json" });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return validationError({ "header.content-length": "does not match the body" });
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("PAYLOAD_TOO_LARGE");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("UNSUPPORTED_MEDIA_TYPE");
    case "FST_ERR_BAD_URL":
    case "FST_ERR_ASYNC_CONSTRAINT":
      return validationError({ path: "is not a valid URL" });
  }
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) {
    return validationError({ body: "is not valid JSON" }, "The request body is not valid JSON");
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 413) return new AppError("PAYLOAD_TOO_LARGE");
  if (status === 415) return new AppError("UNSUPPORTED_MEDIA_TYPE");
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError("VALIDATION_ERROR", "The request is not valid");
  }
  return new AppError("INTERNAL_ERROR");
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).send({
    success: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

function allowedMethods(app: FastifyInstance, url: string): string[] {
  const path = url.split("?")[0] ?? url;
  return METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}

export const plumbing = fp(
  async (app: FastifyInstance) => {
    // The API speaks JSON only; anything else is a 415, not a string handed to a JSON schema.
    app.removeContentTypeParser("text/plain");

    // The route's config, read once per request (route-context.ts) for later hooks (auth, metrics).
    app.decorateRequest("route", null);
    app.addHook("onRequest", (request, reply, done) => {
      request.route = routeConfig(request);
      reply.header("x-request-id", request.id);
      done();
    });

    // Every route documents and serializes the error envelope.
    app.addHook("onRoute", (route) => {
      route.schema ??= {};
      route.schema.response ??= {};
      const response = route.schema.response as Record<string, unknown>;
      for (const [status, schema] of Object.entries(COMMON_ERROR_RESPONSES)) response[status] ??= schema;
    });

    app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const appError = toAppError(error);
      if (appError.status >= 500) {
        request.log.error({ err: error }, "request failed");
      } else if (!(error instanceof AppError)) {
        request.log.debug({ err: error }, "request rejected");
      }
      return sendError(reply, appError);
    });

    app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
      const allowed = allowedMethods(app, request.url);
      if (allowed.length > 0) {
        const error = new AppError(
          "METHOD_NOT_ALLOWED",
          `${request.method} is not allowed on this path; allowed: ${allowed.join(", ")}`,
          { allowed },
        ).withHeaders({ Allow: allowed.join(", ") });
        return sendError(reply, error);
      }
      return sendError(
        reply,
        new AppError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}`),
      );
    });
  },
  { name: "crossbook-plumbing" },
);
