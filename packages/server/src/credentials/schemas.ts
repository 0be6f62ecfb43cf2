/**
 * Venue credentials on the wire. The link body is one flat object for both venues (not a union):
 * Ajv reports a union's failures once per branch, which would tell a Polymarket caller that
 * `key_id` is required. The formats are checked here; which fields each venue needs or refuses, and
 * the key material itself, are checked in service.ts so every error names its field.
 */
import { Type } from "typebox";
import { StringEnum } from "../http/envelope";

export const CREDENTIAL_VENUES = ["polymarket", "kalshi"] as const;

const Timestamp = Type.String({ format: "date-time" });

/** 0 | 1 | 2 | 3 as `{type: "integer", enum}`: a bad value gets one "must be one of" message. */
function SignatureType(description: string) {
  return Type.Unsafe<0 | 1 | 2 | 3>({ type: "integer", enum: [0, 1, 2, 3], description });
}

/** Polymarket's wallet kinds, by signature type (0 eoa, 1 proxy, 2 safe, 3 deposit_wallet). */
export const WALLET_TYPES = ["eoa", "proxy", "safe", "deposit_wallet"] as const;

export const VenueCredentialSchema = Type.Object({
  id: Type.String({ description: "vcr_…; kept when the venue is linked again" }),
  venue: StringEnum(CREDENTIAL_VENUES),
  label: Type.Union([Type.String(), Type.Null()]),
  address: Type.Union([Type.String(), Type.Null()], {
    description: "Polymarket: the signer (EOA) address derived from the private key; null for Kalshi",
  }),
  key_id: Type.Union([Type.String(), Type.Null()], {
    description: "Kalshi: the API key id; null for Polymarket",
  }),
  funder: Type.Union([Type.String(), Type.Null()], {
    description:
      "Polymarket: the proxy, Safe or deposit wallet holding the funds (signature types 1, 2 and 3)",
  }),
  signature_type: Type.Union([
    SignatureType(
      "Polymarket: 0 EOA, 1 email/Magic proxy, 2 browser-wallet Safe, 3 deposit wallet (POLY_1271)",
    ),
    Type.Null(),
  ]),
  wallet_type: Type.Union([StringEnum(WALLET_TYPES), Type.Null()], {
    description:
      "Polymarket: the kind of account the signature type says this is (eoa, proxy, safe, deposit_wallet); null for Kalshi",
  }),
  has_api_credentials: Type.Boolean({
    description: "Polymarket: L2 API credentials were linked (else they are derived from the private key)",
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const VenueCredentialList = Type.Array(VenueCredentialSchema);

export const LinkCredentialBody = Type.Object(
  {
    venue: StringEnum(CREDENTIAL_VENUES),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "A name for you" })),
    private_key: Type.Optional(
      Type.String({
        pattern: "^0x[0-9a-fA-F]{64}$",
        description: "Polymarket (required): the signer's private key, 0x and 64 hex digits",
      }),
    ),
    signature_type: Type.Optional(
      SignatureType(
        "Polymarket: 0 EOA (default), 1 email/Magic proxy, 2 browser-wallet Safe, 3 deposit wallet " +
          "(POLY_1271, the default for accounts opened since May 2026)",
      ),
    ),
    funder: Type.Optional(
      Type.String({
        pattern: "^0x[0-9a-fA-F]{40}$",
        description:
          "Polymarket: the wallet holding the funds (the proxy, Safe or deposit wallet address); required " +
          "for signature types 1, 2 and 3, where it is not the signer's own address",
      }),
    ),
    api_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "Polymarket L2: all three or none" }),
    ),
    api_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    api_passphrase: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    key_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: "^[A-Za-z0-9][A-Za-z0-9_-]*$",
        description: "Kalshi (required): the API key id (a UUID)",
      }),
    ),
    private_key_pem: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16_384,
        description: "Kalshi (required): the RSA private key, PEM (PKCS#1 or PKCS#8), unencrypted",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Polymarket: {venue:"polymarket", private_key, signature_type?, funder?, api_key?, api_secret?, ' +
      'api_passphrase?, label?}. Kalshi: {venue:"kalshi", key_id, private_key_pem, label?}. Linking a ' +
      "venue again replaces the account's credential for it.",
  },
);

export const CredentialParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const UnlinkedSchema = Type.Object({
  id: Type.String(),
  venue: StringEnum(CREDENTIAL_VENUES),
  deleted: Type.Literal(true),
});
