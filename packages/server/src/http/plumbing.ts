/**
 * What every request passes through regardless of route: a request id on every response, the
 * envelope for every error (ours, Fastify's, Ajv's, and unknown ones), 404 for unknown paths and 405
 * (with Allow) for a known path with the wrong method. Nothing here shows internals on a 5xx.
 *
 * Some answers are made before any route or hook runs: Fastify's router refuses a bad percent-escape
 * or an overlong path parameter, and Node's HTTP parser refuses malformed requests, oversized
 * headers and slow senders. `serverOptions` routes those through the same envelope too, so a client
 * never has to parse a second error format.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { newId } from "../infra/ids";
import { COMMON_ERROR_RESPONSES } from "./envelope";
import { AppError, validationError } from "./errors";
import { type RouteConfig, routeConfig } from "./route-context";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Fastify's default `maxParamLength`, which the app keeps: a longer path parameter is a 414. */
export const MAX_PARAM_LENGTH = 100;

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
    } else if (error.keyword === "type" && error.params?.["type"] === "boolean") {
      // Ajv says "must be boolean"; in a query string and in JSON alike the values are these two.
      message = "must be true or false";
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
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new AppError("URI_TOO_LONG", `A path segment is longer than ${MAX_PARAM_LENGTH} characters`);
  }
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) {
    return validationError({ body: "is not valid JSON" }, "The request body is not valid JSON");
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 413) return new AppError("PAYLOAD_TOO_LARGE");
  if (status === 414) return new AppError("URI_TOO_LONG");
  if (status === 415) return new AppError("UNSUPPORTED_MEDIA_TYPE");
  if (status === 431) return new AppError("REQUEST_HEADER_FIELDS_TOO_LARGE");
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError("VALIDATION_ERROR", "The request is not valid");
  }
  return new AppError("INTERNAL_ERROR");
}

function nonFiniteField(values: unknown, location: string): string | undefined {
  if (values === null || typeof values !== "object") return undefined;
  const record = values as Record<string, unknown>;
  for (const name in record) {
    const value = record[name];
    if (isNonFinite(value) || (Array.isArray(value) && value.some(isNonFinite))) return `${location}.${name}`;
  }
  return undefined;
}

function isNonFinite(value: unknown): boolean {
  return typeof value === "number" && !Number.isFinite(value);
}

/**
 * Ajv's type coercion turns "1e309" or "Infinity" into Infinity, which passes `integer`, `minimum`
 * and `maximum`; a non-finite number is never a meaningful query or path value.
 */
function rejectNonFinite(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const field = nonFiniteField(request.query, "query") ?? nonFiniteField(request.params, "path");
  done(field ? validationError({ [field]: "must be a finite number" }) : undefined);
}

function isNumberSchema(schema: unknown): boolean {
  if (schema === null || typeof schema !== "object") return false;
  const { type, anyOf } = schema as { type?: unknown; anyOf?: unknown };
  if (type === "number" || type === "integer") return true;
  if (Array.isArray(type) && (type.includes("number") || type.includes("integer"))) return true;
  return Array.isArray(anyOf) && anyOf.some(isNumberSchema);
}

function hasNumberProperty(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && Object.values(properties).some(isNumberSchema);
}

/** Sends an already-serialized JSON body: Fastify skips serialization for a string or buffer. */
export function sendSerialized(reply: FastifyReply, body: string | Buffer): FastifyReply {
  return reply.header("content-type", "application/json; charset=utf-8").send(body);
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

function envelopeJson(error: AppError): string {
  return JSON.stringify({
    success: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

/**
 * A complete HTTP/1.1 answer in the envelope for a socket that no request object owns (parse errors,
 * CONNECT, refused WebSocket upgrades).
 */
export function rawAnswer(error: AppError): string {
  const body = envelopeJson(error);
  const lines = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${newId("req")}`,
    "Connection: close",
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

const REQUEST_LINE_START = /^[A-Z]+ /;

/**
 * Node counts the request line and the headers against one limit (`maxHeaderSize`). When the bytes
 * it refused start with a request line that alone reaches the limit, the URL is what is too long.
 */
function urlOverflowed(rawPacket: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  if (!REQUEST_LINE_START.test(rawPacket.toString("latin1", 0, Math.min(rawPacket.length, 16)))) return false;
  const lineEnd = rawPacket.indexOf("\n");
  return lineEnd === -1 || lineEnd >= maxHeaderSize;
}

/** What Node's HTTP parser refused (a `clientError`), as a catalog error. */
export function clientErrorToAppError(error: { code?: string; rawPacket?: unknown }): AppError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError("REQUEST_TIMEOUT");
    case "HPE_HEADER_OVERFLOW":
      return urlOverflowed(error.rawPacket)
        ? new AppError("URI_TOO_LONG", "The URL is too long")
        : new AppError("REQUEST_HEADER_FIELDS_TOO_LARGE");
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return validationError({ "header.content-length": "is not a valid length for this request" });
    case "HPE_INVALID_TRANSFER_ENCODING":
      return validationError({ "header.transfer-encoding": "is not valid" });
    case "HPE_INVALID_CHUNK_SIZE":
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return validationError({ body: "is not valid chunked encoding" });
    case "HPE_INVALID_EOF_STATE":
      return validationError({ body: "ended before the request was complete" });
    case "HPE_INVALID_METHOD":
      return validationError({ method: "is not an HTTP method" });
    case "HPE_INVALID_URL":
      return validationError({ path: "is not a valid URL" });
    case "HPE_INVALID_HEADER_TOKEN":
      return validationError({ header: "has a malformed name or value" });
    default:
      return validationError({ request: "is not a valid HTTP/1.1 request" });
  }
}

/** Fastify's `clientErrorHandler`: Node could not parse a request, so there is no request object. */
function onClientError(
  this: FastifyInstance,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
): void {
  // A reset connection has nobody left to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const appError = clientErrorToAppError(error);
  this.log.debug({ err: error, code: appError.code }, "malformed request refused");
  // A response already under way owns the socket; writing ours into it would corrupt it (Node's own
  // handler makes the same check).
  const current = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !current?.headersSent) socket.write(rawAnswer(appError));
  socket.destroy();
}

/** Fastify's `frameworkErrors`: the router refused the URL before any hook ran. */
function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-request-id", request.id);
  sendError(reply, toAppError(error));
}

/**
 * Server options for `Fastify(...)` that keep the answers made outside routes and hooks in the
 * envelope. Node's own bodiless 400 for a missing Host header is turned off: the onRequest hook
 * below answers it in the envelope instead.
 */
export const serverOptions = {
  frameworkErrors: onFrameworkError,
  clientErrorHandler: onClientError,
  http: { requireHostHeader: false },
};

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
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (Node's check is off, see above).
      if (request.raw.headers.host === undefined && request.raw.httpVersion === "1.1") {
        done(validationError({ "header.host": "is required in HTTP/1.1" }));
        return;
      }
      done();
    });

    // Node answers these itself, without a body, unless someone listens. An unknown Expect value
    // is ignored (RFC 9110 10.1.1 allows it) and the request is served as usual; CONNECT is a 405.
    app.server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
      app.server.emit("request", req, res);
    });
    app.server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
      if (socket.writable) {
        socket.write(
          rawAnswer(new AppError("METHOD_NOT_ALLOWED", "CONNECT is not supported: crossbook is not a proxy")),
        );
      }
      socket.destroy();
    });

    // Every route documents and serializes the error envelope.
    app.addHook("onRoute", (route) => {
      route.schema ??= {};
      route.schema.response ??= {};
      const response = route.schema.response as Record<string, unknown>;
      for (const [status, schema] of Object.entries(COMMON_ERROR_RESPONSES)) response[status] ??= schema;
      // Only routes with numbers in their query or path pay for the finite-number check.
      if (hasNumberProperty(route.schema.querystring) || hasNumberProperty(route.schema.params)) {
        const own = route.preHandler ?? [];
        route.preHandler = [rejectNonFinite, ...(Array.isArray(own) ? own : [own])];
      }
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
