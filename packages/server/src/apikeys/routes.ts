/**
 * API-key management (spec 4.3 and the listing/rename/revoke the spec leaves open). Authorized by
 * a sign-in session token (both environments), or by an admin key (permission `manage_keys`), which
 * manages keys of its own environment only.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireAuth } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import {
  ApiKeySchema,
  CreatedApiKeySchema,
  CreateKeyBody,
  KeyIdParams,
  ListKeysQuery,
  RenameKeyBody,
} from "./schemas";
import type { ApiKey, ApiKeysService, KeyScope } from "./service";

/** The caller's account and reach: a session manages both environments, a key its own. */
function caller(request: FastifyRequest): { accountId: string; scope: KeyScope } {
  const auth = requireAuth(request);
  return { accountId: auth.account.id, scope: auth.kind === "key" ? auth.key.environment : undefined };
}

const view = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  type: k.type,
  permissions: k.permissions,
  environment: k.environment,
  prefix: k.prefix,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
});

const manage = { auth: "session", permission: "manage_keys" } as const;

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (
  app,
  { apiKeys },
) => {
  app.post(
    "/v1/api-keys",
    {
      config: manage,
      schema: {
        tags: ["api-keys"],
        summary: "Create an API key; the secret is in this response only",
        body: CreateKeyBody,
        response: { 201: Envelope(CreatedApiKeySchema) },
      },
    },
    async (request, reply) => {
      const { accountId, scope } = caller(request);
      const { apiKey, secret } = await apiKeys.create(accountId, request.body, scope);
      return reply.code(201).send(
        ok({
          id: apiKey.id,
          key: secret,
          name: apiKey.name,
          type: apiKey.type,
          permissions: apiKey.permissions,
          environment: apiKey.environment,
          prefix: apiKey.prefix,
          created_at: apiKey.created_at,
        }),
      );
    },
  );

  app.get(
    "/v1/api-keys",
    {
      config: manage,
      schema: {
        tags: ["api-keys"],
        summary: "List the account's keys (never their secrets)",
        querystring: ListKeysQuery,
        response: { 200: Envelope(Type.Array(ApiKeySchema)) },
      },
    },
    async (request) => {
      const { accountId, scope } = caller(request);
      return ok((await apiKeys.list(accountId, request.query.environment, scope)).map(view));
    },
  );

  app.patch(
    "/v1/api-keys/:id",
    {
      config: manage,
      schema: {
        tags: ["api-keys"],
        summary: "Rename a key",
        params: KeyIdParams,
        body: RenameKeyBody,
        response: { 200: Envelope(ApiKeySchema) },
      },
    },
    async (request) => {
      const { accountId, scope } = caller(request);
      return ok(view(await apiKeys.rename(accountId, request.params.id, request.body.name, scope)));
    },
  );

  app.delete(
    "/v1/api-keys/:id",
    {
      config: manage,
      schema: {
        tags: ["api-keys"],
        summary: "Revoke a key; it stops working on the very next request",
        params: KeyIdParams,
        response: { 200: Envelope(ApiKeySchema) },
      },
    },
    async (request) => {
      const { accountId, scope } = caller(request);
      return ok(view(await apiKeys.revoke(accountId, request.params.id, scope)));
    },
  );
};
