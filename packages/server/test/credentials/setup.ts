/**
 * Shared set-up for the venue-credential suites: an app, an account with a live trading key, and
 * key material. The Polymarket keys are Hardhat's published test accounts, so the signer addresses
 * below are known answers, not computed by the code under test. RSA and EC keys are generated once.
 */
import { generateKeyPairSync } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { bearer, createKey, createTestApp, signup, type TestApp, type TestAppOptions } from "../support/app";

/** Hardhat account #0 and #1: private key and address. */
export const POLY_KEY_A = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
export const POLY_ADDRESS_A = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
export const POLY_KEY_B = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
export const POLY_ADDRESS_B = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** A Safe wallet address (EIP-55 checksummed) and the same address in lower case. */
export const FUNDER = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
export const FUNDER_LOWER = FUNDER.toLowerCase();

export const KALSHI_KEY_ID = "a952bcbe-ec3b-4b5b-b8f9-11dae589608c";

function rsa(bits: number) {
  return generateKeyPairSync("rsa", { modulusLength: bits });
}

const rsaKey = rsa(2048);
export const RSA_PKCS1_PEM = rsaKey.privateKey.export({ type: "pkcs1", format: "pem" }) as string;
export const RSA_PKCS8_PEM = rsaKey.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
export const RSA_PUBLIC_PEM = rsaKey.publicKey.export({ type: "spki", format: "pem" }) as string;
export const RSA_1024_PEM = rsa(1024).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
export const EC_PEM = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({
  type: "pkcs8",
  format: "pem",
}) as string;
export const ED25519_PEM = generateKeyPairSync("ed25519").privateKey.export({
  type: "pkcs8",
  format: "pem",
}) as string;

/** The base64 body of a PEM: what must never show up anywhere in clear. */
export function pemBody(pem: string): string {
  return pem
    .split("\n")
    .filter((line) => line && !line.startsWith("-----"))
    .join("");
}

export const POLY_API = {
  api_key: "4b6f1a1e-3d1c-4a57-9f0e-6b0c5c1d2e3f",
  api_secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==",
  api_passphrase: "passphrase-0d6e0e7b4c",
};

export type CredentialsTestApp = TestApp & { schema?: string; redisPrefix: string };

export async function credentialsApp(
  options: TestAppOptions = {},
): Promise<{ t: CredentialsTestApp; key: string; session: string; accountId: string }> {
  const t = await createTestApp(options);
  const { session, accountId } = await signup(t.app);
  const key = (await createKey(t.app, session, { type: "trading" })).key;
  return { t, key, session, accountId };
}

export async function link(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  return app.inject({ method: "POST", url: "/v1/venue-credentials", headers: bearer(key), payload: body });
}

/** Links and expects success (201 or 200); returns the response data. */
export async function linked(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  const response = await link(app, key, body);
  if (response.statusCode !== 201 && response.statusCode !== 200)
    throw new Error(`link failed: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function listCredentials(app: FastifyInstance, key: string) {
  const response = await app.inject({ method: "GET", url: "/v1/venue-credentials", headers: bearer(key) });
  if (response.statusCode !== 200) throw new Error(`list failed: ${response.statusCode} ${response.body}`);
  return response.json().data as Array<Record<string, unknown>>;
}
