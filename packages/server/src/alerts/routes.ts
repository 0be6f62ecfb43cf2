/** Price alerts: create, list, read and delete the caller's alerts (in its key's environment). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import type { Owner } from "../access/owner";
import { keyOwner } from "../http/auth";
import { Envelope, ok, PagedEnvelope, PageMeta, pageMeta } from "../http/envelope";
import { microsToNumber } from "../venues/decimal";
import { AlertListQuery, AlertParams, AlertSchema, CreateAlertBody } from "./schemas";
import type { AlertRow, AlertsService } from "./service";
import type { Condition } from "./triggers";

export function alertView(row: AlertRow) {
  return {
    id: row.id,
    market_id: row.market_id,
    condition: row.condition as Condition,
    threshold: microsToNumber(Number(row.threshold)),
    repeat: row.repeat === 1,
    status: row.status as "active" | "triggered",
    armed: row.armed === 1,
    trigger_count: row.trigger_count,
    last_triggered_at: row.last_triggered_at,
    environment: row.environment as Owner["environment"],
    created_at: row.created_at,
  };
}

/** Alerts are held by API keys: the account and the key's environment own them. */
function owner(request: FastifyRequest): Owner {
  return keyOwner(request, "Alerts are managed with an API key");
}

export const alertRoutes: FastifyPluginAsyncTypebox<{ alerts: AlertsService }> = async (app, { alerts }) => {
  app.post(
    "/v1/alerts",
    {
      config: { auth: "key", permission: "manage_alerts" },
      schema: {
        tags: ["alerts"],
        summary: "Create a price alert; a condition that already holds fires at once",
        body: CreateAlertBody,
        response: { 201: Envelope(AlertSchema) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(ok(alertView(await alerts.create(owner(request), request.body)))),
  );

  app.get(
    "/v1/alerts",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["alerts"],
        summary: "The caller's alerts, newest first",
        querystring: AlertListQuery,
        response: { 200: PagedEnvelope(AlertSchema, PageMeta) },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0, market_id, status } = request.query;
      const { rows, total } = await alerts.list(
        owner(request),
        { ...(market_id ? { marketId: market_id } : {}), ...(status ? { status } : {}) },
        { limit, offset },
      );
      return { success: true as const, data: rows.map(alertView), meta: pageMeta(offset, limit, total) };
    },
  );

  app.get(
    "/v1/alerts/:id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["alerts"],
        summary: "One alert",
        params: AlertParams,
        response: { 200: Envelope(AlertSchema) },
      },
    },
    async (request) => ok(alertView(await alerts.get(owner(request), request.params.id))),
  );

  app.delete(
    "/v1/alerts/:id",
    {
      config: { auth: "key", permission: "manage_alerts" },
      schema: {
        tags: ["alerts"],
        summary: "Delete an alert; it stops being evaluated at once. Returns it as it was",
        params: AlertParams,
        response: { 200: Envelope(AlertSchema) },
      },
    },
    async (request) => ok(alertView(await alerts.delete(owner(request), request.params.id))),
  );
};
