/**
 * Polymarket API sessions: turns a user's linked credentials into what trading calls need — the
 * signer account, the funder (maker) address, the order's `signer` field, and L2 API credentials,
 * deriving those with an L1 EIP-712 signature when the user linked only a private key (derive
 * first, create if none exists). Also produces the `sign` hook VenueHttp calls for L2 HMAC headers.
 * VENUES.md §1.5; wallet types in this folder's README.
 */
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Clock } from "../../infra/clock";
import { VenueError } from "../errors";
import type { RequestOptions, VenueHttp } from "../http";
import type { VenueCredentials } from "../venue";
import { isObject } from "./normalize";
import { type ApiCredentials, l1Headers, l2Headers, POLY_1271, type SignatureType } from "./signing";

export type PolymarketCredentials = Extract<VenueCredentials, { venue: "polymarket" }>;

export interface Session {
  privateKey: Hex;
  /** The EOA whose key signs: POLY_ADDRESS of L1 and L2 headers, the API key's owner. */
  signer: Hex;
  /** Who holds the funds (order `maker`): the funder for proxy/safe/deposit wallets, else the EOA. */
  maker: Hex;
  /** The order's `signer` field: the EOA, except for a deposit wallet (type 3), where it is the wallet. */
  orderSigner: Hex;
  signatureType: SignatureType;
  api: ApiCredentials;
}

const WALLET_NAMES: Record<SignatureType, string> = {
  0: "EOA",
  1: "proxy",
  2: "Safe",
  3: "deposit wallet",
};

export class PolymarketAuth {
  readonly #derived = new Map<string, Promise<ApiCredentials>>();

  constructor(
    private readonly http: VenueHttp,
    private readonly clock: Clock,
    private readonly chainId: number,
  ) {}

  async session(credentials: VenueCredentials): Promise<Session> {
    if (credentials.venue !== "polymarket")
      throw new VenueError(
        "polymarket",
        "auth_failed",
        `credentials for ${credentials.venue} given to polymarket`,
      );
    if (!/^0x[0-9a-fA-F]{64}$/.test(credentials.privateKey))
      throw new VenueError("polymarket", "auth_failed", "polymarket private key must be 32-byte 0x hex");
    const privateKey = credentials.privateKey as Hex;
    const signer = privateKeyToAccount(privateKey).address;
    let maker: Hex = signer;
    if (credentials.signatureType !== 0) {
      const wallet = WALLET_NAMES[credentials.signatureType];
      if (!credentials.funder || !/^0x[0-9a-fA-F]{40}$/.test(credentials.funder))
        throw new VenueError(
          "polymarket",
          "auth_failed",
          `signature type ${credentials.signatureType} (${wallet}) needs the funder wallet address`,
        );
      if (credentials.funder.toLowerCase() === signer.toLowerCase())
        throw new VenueError(
          "polymarket",
          "auth_failed",
          `signature type ${credentials.signatureType} (${wallet}): the funder is the ${wallet}, not the signer itself`,
        );
      maker = credentials.funder as Hex;
    } else if (credentials.funder && credentials.funder.toLowerCase() !== signer.toLowerCase()) {
      throw new VenueError(
        "polymarket",
        "auth_failed",
        "signature type 0 (EOA) trades from the signer itself",
      );
    }
    const api =
      credentials.apiKey && credentials.apiSecret && credentials.apiPassphrase
        ? { apiKey: credentials.apiKey, secret: credentials.apiSecret, passphrase: credentials.apiPassphrase }
        : await this.#derive(privateKey, signer);
    // A deposit wallet signs orders as itself (ERC-1271): its address is the order's signer too.
    const orderSigner = credentials.signatureType === POLY_1271 ? maker : signer;
    return { privateKey, signer, maker, orderSigner, signatureType: credentials.signatureType, api };
  }

  /** `GET /auth/derive-api-key`, or `POST /auth/api-key` when the wallet has no key yet. */
  #derive(privateKey: Hex, address: string): Promise<ApiCredentials> {
    const cached = this.#derived.get(address);
    if (cached) return cached;
    const run = (async () => {
      const headers = async () =>
        l1Headers(privateKey, { timestampS: Math.floor(this.clock.now() / 1000), chainId: this.chainId });
      try {
        const derived = await this.http.request("GET", "/auth/derive-api-key", { headers: await headers() });
        return apiCredentials(derived.body);
      } catch (error) {
        if (!(error instanceof VenueError) || (error.kind !== "not_found" && error.kind !== "rejected"))
          throw error;
      }
      const created = await this.http.request("POST", "/auth/api-key", {
        headers: await headers(),
        mode: "write",
      });
      return apiCredentials(created.body);
    })();
    this.#derived.set(address, run);
    run.catch(() => this.#derived.delete(address));
    return run;
  }

  /** The VenueHttp `sign` hook: L2 headers over the path relative to the CLOB base, without query. */
  signer(session: Session): NonNullable<RequestOptions["sign"]> {
    const basePath = new URL(this.http.baseUrl).pathname.replace(/\/$/, "");
    return ({ method, path, body }) =>
      l2Headers(session.api, session.signer, {
        timestampS: Math.floor(this.clock.now() / 1000),
        method,
        requestPath: basePath && path.startsWith(basePath) ? path.slice(basePath.length) || "/" : path,
        body,
      });
  }
}

function apiCredentials(body: unknown): ApiCredentials {
  if (
    isObject(body) &&
    typeof body.apiKey === "string" &&
    typeof body.secret === "string" &&
    typeof body.passphrase === "string"
  )
    return { apiKey: body.apiKey, secret: body.secret, passphrase: body.passphrase };
  throw new VenueError(
    "polymarket",
    "bad_response",
    "polymarket API key response lacks apiKey/secret/passphrase",
  );
}
