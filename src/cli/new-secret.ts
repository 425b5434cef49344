import { randomBytes } from "node:crypto";

/** Random bytes in a new secret: 32 bytes is 256 bits, beyond any guessing. */
export const SECRET_BYTES = 32;

/** A new inbound secret: 32 random bytes, base64url (43 characters, safe in shells and headers). */
export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString("base64url");
}
