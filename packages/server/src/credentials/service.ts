/**
 * Linked venue accounts: a user with a live key hands crossbook its own Polymarket or Kalshi
 * credentials so the order router can trade for it. Everything checkable offline is checked before
 * anything is stored (hex key on the curve, funder rules, RSA PEM), so a bad link fails at linking,
 * not at the first order.
 *
 * Secrets (private keys, Polymarket L2 key/secret/passphrase) are sealed as one JSON value with the
 * SecretBox, bound to the row id as associated data: a sealed value copied into another row does
 * not open. Nothing here logs, returns or puts a secret in an error message (viem's and
 * node:crypto's errors can quote the key, so they are caught and replaced).
 *
 * One credential per account and venue: linking again replaces it in place (same id, new
 * `updated_at`). Only live keys may link: a sandbox key trades on the simulated exchange and never
 * reaches a venue.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import { getAddress, type Hex, isAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Owner } from "../access/owner";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import { newId } from "../infra/ids";
import type { SecretBox } from "../infra/secretbox";
import type { VenueId } from "../venues/model";
import type { VenueCredentials } from "../venues/venue";
import * as repo from "./repo";

export type CredentialRow = repo.CredentialRow;

/** What the link request carries (the HTTP body, minus HTTP). */
export interface LinkCredentialInput {
  venue: VenueId;
  label?: string | undefined;
  private_key?: string | undefined;
  signature_type?: 0 | 1 | 2 | 3 | undefined;
  funder?: string | undefined;
  api_key?: string | undefined;
  api_secret?: string | undefined;
  api_passphrase?: string | undefined;
  key_id?: string | undefined;
  private_key_pem?: string | undefined;
}

/** The sealed JSON: only the secret fields, named as in the request. */
type SealedSecret =
  | { private_key: string; api_key?: string; api_secret?: string; api_passphrase?: string }
  | { private_key_pem: string };

/** A validated link: what goes into the row in clear, and what gets sealed. */
interface ParsedLink {
  venue: VenueId;
  fields: {
    label: string | null;
    address: string | null;
    key_id: string | null;
    funder: string | null;
    signature_type: number | null;
    has_api_credentials: number;
  };
  secret: SealedSecret;
}

const POLYMARKET_FIELDS = [
  "private_key",
  "signature_type",
  "funder",
  "api_key",
  "api_secret",
  "api_passphrase",
] as const;
const KALSHI_FIELDS = ["key_id", "private_key_pem"] as const;
const API_FIELDS = ["api_key", "api_secret", "api_passphrase"] as const;

/** Polymarket signature types 1–3, by the wallet they trade from. */
const WALLET_NAMES: Record<number, string> = { 1: "proxy", 2: "Safe", 3: "deposit" };

const PRIVATE_KEY_HEX = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_HEX = /^0x[0-9a-fA-F]{40}$/;
const MIN_RSA_BITS = 2048;
/** Kalshi keys are 2048 or 4096 bits; a larger one would make every signature we compute costly. */
const MAX_RSA_BITS = 4096;

/** Venue credentials are a live-trading thing; throws 403 for a sandbox key. */
export function assertLive(owner: Owner): void {
  if (owner.environment !== "live") {
    throw new AppError(
      "FORBIDDEN",
      "Venue credentials are for live keys: a sandbox key trades on the simulated exchange and never reaches a venue",
      { environment: owner.environment },
    );
  }
}

function refuseOtherVenue(
  input: LinkCredentialInput,
  names: readonly (keyof LinkCredentialInput)[],
  errors: Record<string, string>,
) {
  for (const name of names) {
    if (input[name] !== undefined) errors[`body.${name}`] = `is not an accepted field for ${input.venue}`;
  }
}

function parsePolymarket(input: LinkCredentialInput, errors: Record<string, string>): ParsedLink | undefined {
  refuseOtherVenue(input, KALSHI_FIELDS, errors);
  const signatureType = input.signature_type ?? 0;

  let signer: string | undefined;
  if (input.private_key === undefined) {
    errors["body.private_key"] = "is required for polymarket";
  } else if (!PRIVATE_KEY_HEX.test(input.private_key)) {
    errors["body.private_key"] = "must be 0x followed by 64 hex digits";
  } else {
    try {
      signer = privateKeyToAccount(input.private_key as Hex).address;
    } catch {
      // viem's message quotes the key: never pass it on.
      errors["body.private_key"] = "is not a valid secp256k1 private key (zero or not below the curve order)";
    }
  }

  let funder: string | null = null;
  if (input.funder !== undefined) {
    if (!ADDRESS_HEX.test(input.funder)) {
      errors["body.funder"] = "must be 0x followed by 40 hex digits";
    } else if (!isAddress(input.funder)) {
      errors["body.funder"] = "has a bad EIP-55 checksum (check the address, or send it in lower case)";
    } else {
      funder = getAddress(input.funder);
    }
  }
  // Types 1–3 trade from a wallet contract the key controls (the order's maker; for a deposit
  // wallet also its signer), type 0 from the key's own address: a funder that contradicts the type
  // would have every order refused at the venue.
  if (signatureType !== 0 && input.funder === undefined) {
    errors["body.funder"] =
      signatureType === 3
        ? "is required for signature_type 3: the deposit wallet's address (the account address shown on polymarket.com), which holds the funds and signs the orders"
        : `is required for signature_type ${signatureType}: the proxy or Safe wallet that holds the funds`;
  }
  if (signatureType !== 0 && funder !== null && signer !== undefined && funder === signer) {
    errors["body.funder"] =
      `must be the ${WALLET_NAMES[signatureType]} wallet, not the signer's own address, for signature_type ${signatureType} ` +
      "(send signature_type 0 to trade from the key's own address)";
  }
  if (signatureType === 0 && funder !== null && signer !== undefined && funder !== signer) {
    errors["body.funder"] =
      "must be left out (or be the signer's own address) for signature_type 0: an EOA trades from itself " +
      "(a proxy, Safe or deposit wallet needs signature_type 1, 2 or 3)";
  }

  const given = API_FIELDS.filter((name) => input[name] !== undefined);
  if (given.length > 0 && given.length < API_FIELDS.length) {
    for (const name of API_FIELDS) {
      if (input[name] === undefined) {
        errors[`body.${name}`] =
          `is required when ${given.join(" and ")} ${given.length === 1 ? "is" : "are"} given: send api_key, api_secret and api_passphrase together, or none to derive them`;
      }
    }
  }

  if (Object.keys(errors).length > 0 || signer === undefined) return undefined;
  const withApi = given.length === API_FIELDS.length;
  return {
    venue: "polymarket",
    fields: {
      label: input.label ?? null,
      address: signer,
      key_id: null,
      funder,
      signature_type: signatureType,
      has_api_credentials: withApi ? 1 : 0,
    },
    secret: {
      private_key: input.private_key!,
      ...(withApi
        ? { api_key: input.api_key!, api_secret: input.api_secret!, api_passphrase: input.api_passphrase! }
        : {}),
    },
  };
}

/** Why a PEM cannot sign Kalshi requests, or undefined when it can. */
function pemProblem(pem: string): string | undefined {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    return "is not a readable private key: send an unencrypted PEM (PKCS#1 BEGIN RSA PRIVATE KEY, or PKCS#8 BEGIN PRIVATE KEY)";
  }
  if (key.asymmetricKeyType !== "rsa") {
    return `must be an RSA private key (this is a${key.asymmetricKeyType === "ec" ? "n" : ""} ${key.asymmetricKeyType ?? "unknown"} key): Kalshi signs with RSA-PSS`;
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS)
    return `must be an RSA key of at least ${MIN_RSA_BITS} bits (this one has ${bits})`;
  if (bits > MAX_RSA_BITS)
    return `must be an RSA key of at most ${MAX_RSA_BITS} bits, as Kalshi issues them (this one has ${bits})`;
  return undefined;
}

function parseKalshi(input: LinkCredentialInput, errors: Record<string, string>): ParsedLink | undefined {
  refuseOtherVenue(input, POLYMARKET_FIELDS, errors);
  if (input.key_id === undefined) errors["body.key_id"] = "is required for kalshi";
  if (input.private_key_pem === undefined) {
    errors["body.private_key_pem"] = "is required for kalshi";
  } else {
    const problem = pemProblem(input.private_key_pem);
    if (problem) errors["body.private_key_pem"] = problem;
  }
  if (Object.keys(errors).length > 0) return undefined;
  return {
    venue: "kalshi",
    fields: {
      label: input.label ?? null,
      address: null,
      key_id: input.key_id!,
      funder: null,
      signature_type: null,
      has_api_credentials: 0,
    },
    secret: { private_key_pem: input.private_key_pem! },
  };
}

/** Checks a link request offline; throws a 400 naming every bad field. */
export function parseLink(input: LinkCredentialInput): ParsedLink {
  const errors: Record<string, string> = {};
  const parsed =
    input.venue === "polymarket"
      ? parsePolymarket(input, errors)
      : input.venue === "kalshi"
        ? parseKalshi(input, errors)
        : undefined;
  if (!parsed) {
    if (Object.keys(errors).length === 0) errors["body.venue"] = "must be one of: polymarket, kalshi";
    throw validationError(errors);
  }
  return parsed;
}

export class CredentialsService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    /** How many live orders an account has open on a venue (the ledger's count); unlinking checks it. */
    private readonly openLiveOrders: (accountId: string, venue: string) => Promise<number>,
  ) {}

  /**
   * Links a venue account, replacing the account's previous credential for that venue in place.
   * `replaced` says which happened. Concurrent links of one venue settle on one row (the unique
   * index): the loser of an insert race replaces the winner's row.
   */
  async link(owner: Owner, input: LinkCredentialInput): Promise<{ row: CredentialRow; replaced: boolean }> {
    assertLive(owner);
    const parsed = parseLink(input);
    const secret = JSON.stringify(parsed.secret);
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = isoFromMs(this.clock.now());
      const existing = await repo.findByVenue(this.db, owner.accountId, parsed.venue);
      if (existing) {
        const changes = {
          ...parsed.fields,
          sealed_secret: this.box.seal(secret, existing.id),
          updated_at: now,
        };
        if (await repo.updateCredential(this.db, owner.accountId, existing.id, changes)) {
          return { row: { ...existing, ...changes }, replaced: true };
        }
        continue; // Unlinked meanwhile: link anew.
      }
      const id = newId("vcr", this.clock.now());
      const row: CredentialRow = {
        id,
        account_id: owner.accountId,
        venue: parsed.venue,
        ...parsed.fields,
        sealed_secret: this.box.seal(secret, id),
        created_at: now,
        updated_at: now,
      };
      if (await repo.insertIfAbsent(this.db, row)) return { row, replaced: false };
      // Another request linked this venue meanwhile: replace its row.
    }
    throw new Error("could not link venue credentials: the link kept changing concurrently");
  }

  async list(owner: Owner): Promise<CredentialRow[]> {
    assertLive(owner);
    return repo.listCredentials(this.db, owner.accountId);
  }

  async get(owner: Owner, id: string): Promise<CredentialRow> {
    assertLive(owner);
    const row = await repo.findCredential(this.db, owner.accountId, id);
    if (!row) {
      throw new AppError("VENUE_CREDENTIAL_NOT_FOUND", `No venue credential ${id}`, { credential_id: id });
    }
    return row;
  }

  /**
   * Unlinks; orders routed afterwards find no credential for the venue. Returns the row as it was.
   * Refused while live orders are open on the venue (crossbook could no longer follow or cancel
   * them) unless `force` says to leave them to be managed at the venue.
   */
  async unlink(owner: Owner, id: string, options: { force?: boolean } = {}): Promise<CredentialRow> {
    const row = await this.get(owner, id);
    if (!options.force) {
      const open = await this.openLiveOrders(owner.accountId, row.venue);
      if (open > 0)
        throw new AppError(
          "VENUE_HAS_OPEN_ORDERS",
          `${open} live order(s) are open on ${row.venue}: cancel them first (DELETE /v1/orders), or unlink with ?force=true and manage them at the venue`,
          { venue: row.venue, open_orders: open },
        );
    }
    if (!(await repo.deleteCredential(this.db, owner.accountId, id))) {
      throw new AppError("VENUE_CREDENTIAL_NOT_FOUND", `No venue credential ${id}`, { credential_id: id });
    }
    return row;
  }

  /**
   * For the order router: the account's decrypted credentials for a venue, as the venue adapters
   * take them, or undefined when the account has not linked it. Throws (without the secret) when
   * the stored value does not open, e.g. after the master key changed.
   */
  async credentialsFor(accountId: string, venue: VenueId): Promise<VenueCredentials | undefined> {
    const row = await repo.findByVenue(this.db, accountId, venue);
    if (!row) return undefined;
    return this.open(row);
  }

  /** A row's credentials; the sealed value must belong to this very row. */
  open(row: CredentialRow): VenueCredentials {
    let secret: Record<string, string>;
    try {
      secret = JSON.parse(this.box.open(row.sealed_secret, row.id)) as Record<string, string>;
    } catch {
      throw new Error(
        `venue credential ${row.id} could not be decrypted (was CROSSBOOK_MASTER_KEY changed, or the value copied from another row?)`,
      );
    }
    if (row.venue === "kalshi") {
      return { venue: "kalshi", keyId: row.key_id ?? "", privateKeyPem: secret["private_key_pem"] ?? "" };
    }
    if (row.venue !== "polymarket")
      throw new Error(`venue credential ${row.id} is for unknown venue ${row.venue}`);
    return {
      venue: "polymarket",
      privateKey: secret["private_key"] ?? "",
      signatureType: (row.signature_type ?? 0) as 0 | 1 | 2 | 3,
      ...(row.funder ? { funder: row.funder } : {}),
      ...(secret["api_key"] && secret["api_secret"] && secret["api_passphrase"]
        ? {
            apiKey: secret["api_key"],
            apiSecret: secret["api_secret"],
            apiPassphrase: secret["api_passphrase"],
          }
        : {}),
    };
  }
}
