/**
 * Encryption at rest for venue credentials and webhook secrets: AES-256-GCM with a random 96-bit
 * nonce per value. The stored form is `v1.<nonce>.<tag>.<ciphertext>` (base64url), so a future key
 * rotation can add `v2` without guessing. Optional associated data binds a ciphertext to its row
 * (a secret copied to another row fails to decrypt).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("SecretBox needs a 32-byte key");
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, associatedData?: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    if (associatedData) cipher.setAAD(Buffer.from(associatedData, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ["v1", nonce.toString("base64url"), tag.toString("base64url"), body.toString("base64url")].join(
      ".",
    );
  }

  open(sealed: string, associatedData?: string): string {
    const [version, nonce, tag, body] = sealed.split(".");
    if (version !== "v1" || !nonce || !tag || body === undefined) throw new Error("not a sealed secret");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(nonce, "base64url"));
    if (associatedData) decipher.setAAD(Buffer.from(associatedData, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  }
}
