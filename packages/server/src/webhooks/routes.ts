/** Webhooks over HTTP (spec 4.4): register, list, read, update, delete, test, delivery records. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Owner } from "../access/owner";
import { keyOwner } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import type { AttemptRow, WebhookRow } from "./repo";
import {
  CreateWebhookBody,
  DeletedWebhookSchema,
  DeliveriesQuery,
  DeliveryRecordSchema,
  UpdateWebhookBody,
  WebhookParams,
  WebhookSchema,
} from "./schemas";
import type { WebhooksService } from "./service";

function owner(request: FastifyRequest): Owner {
  return keyOwner(request, "Webhooks are managed with an API key");
}

function webhookView(webhook: WebhookRow, secret?: string) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: JSON.parse(webhook.events) as string[],
    status: webhook.status as "active" | "failed",
    environment: webhook.environment as Owner["environment"],
    created_at: webhook.created_at,
    updated_at: webhook.updated_at,
    failed_at: webhook.failed_at,
    ...(secret ? { secret } : {}),
  };
}

export function deliveryView(attempt: AttemptRow) {
  return {
    id: attempt.delivery_id,
    event_type: attempt.event_type,
    status: attempt.status as "success" | "failed",
    response_code: attempt.response_code,
    response_time_ms: attempt.response_time_ms,
    error: attempt.error,
    retry_count: attempt.attempt - 1,
    attempt_id: attempt.id,
    timestamp: attempt.created_at,
  };
}

export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (
  app,
  { webhooks },
) => {
  const tags = ["webhooks"];
  app.post(
    "/v1/webhooks",
    {
      config: { auth: "key", permission: "manage_webhooks" },
      schema: {
        tags,
        summary: "Register an HTTPS endpoint for events (secret generated and returned once when omitted)",
        body: CreateWebhookBody,
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request) => {
      const { webhook, secret } = await webhooks.create(owner(request), request.body);
      return ok(webhookView(webhook, secret));
    },
  );

  app.get(
    "/v1/webhooks",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "The caller's webhooks, newest first",
        response: { 200: Envelope(Type.Array(WebhookSchema)) },
      },
    },
    async (request) => ok((await webhooks.list(owner(request))).map((w) => webhookView(w))),
  );

  app.get(
    "/v1/webhooks/:id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "One webhook",
        params: WebhookParams,
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request) => ok(webhookView(await webhooks.get(owner(request), request.params.id))),
  );

  app.patch(
    "/v1/webhooks/:id",
    {
      config: { auth: "key", permission: "manage_webhooks" },
      schema: {
        tags,
        summary:
          "Replace the subscribed events; also (extensions) change the URL, rotate the secret, re-enable",
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request) => {
      const { webhook, secret } = await webhooks.update(owner(request), request.params.id, request.body);
      return ok(webhookView(webhook, secret));
    },
  );

  app.delete(
    "/v1/webhooks/:id",
    {
      config: { auth: "key", permission: "manage_webhooks" },
      schema: {
        tags,
        summary: "Remove a webhook and its pending deliveries",
        params: WebhookParams,
        response: { 200: Envelope(DeletedWebhookSchema) },
      },
    },
    async (request) => {
      const webhook = await webhooks.delete(owner(request), request.params.id);
      return ok({ id: webhook.id, deleted: true as const });
    },
  );

  app.post(
    "/v1/webhooks/:id/test",
    {
      config: { auth: "key", permission: "manage_webhooks" },
      schema: {
        tags,
        summary: "Send a webhook.test event now; returns its delivery record",
        params: WebhookParams,
        response: { 200: Envelope(DeliveryRecordSchema) },
      },
    },
    async (request) => ok(deliveryView(await webhooks.test(owner(request), request.params.id))),
  );

  app.get(
    "/v1/webhooks/:id/deliveries",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "Delivery attempts, most recent first (spec 2.7)",
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: Envelope(Type.Array(DeliveryRecordSchema)) },
      },
    },
    async (request) =>
      ok(
        (await webhooks.deliveries(owner(request), request.params.id, request.query.limit ?? 50)).map(
          deliveryView,
        ),
      ),
  );
};
