/** Linked venue accounts: link (or replace), list, read and unlink the caller's venue credentials. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Owner } from "../access/owner";
import { keyOwner } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import {
  type CREDENTIAL_VENUES,
  CredentialParams,
  LinkCredentialBody,
  UnlinkedSchema,
  VenueCredentialList,
  VenueCredentialSchema,
  WALLET_TYPES,
} from "./schemas";
import { assertLive, type CredentialRow, type CredentialsService } from "./service";

type Venue = (typeof CREDENTIAL_VENUES)[number];

/** The public view of a link: never a secret (the schema would drop one anyway). */
export function credentialView(row: CredentialRow) {
  return {
    id: row.id,
    venue: row.venue as Venue,
    label: row.label,
    address: row.address,
    key_id: row.key_id,
    funder: row.funder,
    signature_type: row.signature_type as 0 | 1 | 2 | 3 | null,
    wallet_type: row.signature_type === null ? null : (WALLET_TYPES[row.signature_type] ?? null),
    has_api_credentials: row.has_api_credentials === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function owner(request: FastifyRequest): Owner {
  return keyOwner(request, "Venue credentials are managed with an API key");
}

export const credentialRoutes: FastifyPluginAsyncTypebox<{ credentials: CredentialsService }> = async (
  app,
  { credentials },
) => {
  // A sandbox key is refused before its body is even validated: the answer does not depend on it.
  app.addHook("preValidation", async (request) => {
    assertLive(owner(request));
  });

  app.post(
    "/v1/venue-credentials",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["venue credentials"],
        summary:
          "Link a venue account for live trading (live keys only); linking a venue again replaces its credential",
        description:
          "Checked offline before it is stored: the Polymarket key must be a valid secp256k1 key (its signer " +
          "address is returned), the Kalshi key an RSA private key in PEM. Secrets are encrypted at rest and " +
          "never returned. 201 for a new link, 200 when it replaced the venue's previous credential (same id).",
        body: LinkCredentialBody,
        response: { 200: Envelope(VenueCredentialSchema), 201: Envelope(VenueCredentialSchema) },
      },
    },
    async (request, reply) => {
      const { row, replaced } = await credentials.link(owner(request), request.body);
      return reply.code(replaced ? 200 : 201).send(ok(credentialView(row)));
    },
  );

  app.get(
    "/v1/venue-credentials",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["venue credentials"],
        summary: "The account's linked venue accounts (at most one per venue), without secrets",
        response: { 200: Envelope(VenueCredentialList) },
      },
    },
    async (request) => ok((await credentials.list(owner(request))).map(credentialView)),
  );

  app.get(
    "/v1/venue-credentials/:id",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["venue credentials"],
        summary: "One linked venue account, without secrets",
        params: CredentialParams,
        response: { 200: Envelope(VenueCredentialSchema) },
      },
    },
    async (request) => ok(credentialView(await credentials.get(owner(request), request.params.id))),
  );

  app.delete(
    "/v1/venue-credentials/:id",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["venue credentials"],
        summary: "Unlink a venue account; its secrets are deleted and orders can no longer reach that venue",
        params: CredentialParams,
        querystring: Type.Object(
          {
            force: Type.Optional(
              Type.Boolean({
                description:
                  "Unlink although live orders are open on the venue (crossbook stops following them; manage them at the venue)",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(UnlinkedSchema) },
      },
    },
    async (request) => {
      const row = await credentials.unlink(owner(request), request.params.id, {
        force: request.query.force === true,
      });
      return ok({ id: row.id, venue: row.venue as Venue, deleted: true as const });
    },
  );
};
