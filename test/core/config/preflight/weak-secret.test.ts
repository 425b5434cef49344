import { describe, expect, it } from "vitest";
import { weakSecretProblems } from "../../../../src/core/config/preflight/preflight.js";
import {
  findWeakSecrets,
  MIN_SECRET_LENGTH,
  weakSecretReason,
} from "../../../../src/core/config/preflight/weak-secret.js";
import { validateConfig } from "../../../../src/core/config/validate-config.js";

/** What `webhook-channel secret` makes: 43 characters of base64url. */
const STRONG = "q1Vh3nXJ0c9yZkq8bL2sTtR4mW7pA5eD6fG8hJ0kL1M";
const STRONG_TOO = "Zr8yP2nQ4sU6wX8zB1dF3hK5mN7qS9tV0xA2cE4gI6L";

const config = (() => {
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { outbound_url: "http://127.0.0.1:9000/replies", outbound_token_env: "OUT_TOKEN" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    admin: { token_env: "WEBHOOK_ADMIN_SECRET" },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
})();

describe("weakSecretReason", () => {
  it("calls the placeholders of example files and tutorials placeholders, whatever their case", () => {
    for (const value of [
      "replace-me",
      "REPLACE_ME",
      "changeme",
      "change-me",
      "dev-secret",
      "secret",
      "password",
      "test",
    ]) {
      expect(weakSecretReason(value), value).toBe("is a placeholder from an example, not a secret");
    }
  });

  it("finds template text inside a value long enough to pass the length rule", () => {
    const template = "replace-me-with-a-real-secret-of-forty-characters";
    expect(template.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH);
    expect(weakSecretReason(template)).toBe("is a placeholder from an example, not a secret");
    expect(weakSecretReason(`${STRONG}-example`)).toBe("is a placeholder from an example, not a secret");
  });

  it("calls a secret shorter than 32 characters short, and accepts 32 random characters and more", () => {
    expect(weakSecretReason("s3cr3t-value-0123456789")).toBe("is shorter than 32 characters");
    expect(weakSecretReason(STRONG.slice(0, 31))).toBe("is shorter than 32 characters");
    expect(weakSecretReason(STRONG.slice(0, 32))).toBeUndefined();
    expect(weakSecretReason(STRONG)).toBeUndefined();
  });
});

describe("findWeakSecrets", () => {
  it("checks the channel's and the admin secret, naming the variable and never the value", () => {
    const env: Record<string, string> = {
      WEBHOOK_SECRET: "replace-me",
      WEBHOOK_ADMIN_SECRET: "admin-pass",
      OUT_TOKEN: "x",
    };
    const found = findWeakSecrets(config, (name) => env[name]);
    expect(found).toEqual([
      {
        path: "channels[0].token_env",
        variable: "WEBHOOK_SECRET",
        which: "only",
        message: "the secret in WEBHOOK_SECRET is a placeholder from an example, not a secret",
      },
      {
        path: "admin.token_env",
        variable: "WEBHOOK_ADMIN_SECRET",
        which: "only",
        message: "the secret in WEBHOOK_ADMIN_SECRET is shorter than 32 characters",
      },
    ]);
    expect(JSON.stringify(found)).not.toMatch(/replace-me|admin-pass/);
  });

  it("checks both secrets of a rotation, saying which one is weak", () => {
    const env: Record<string, string> = { WEBHOOK_SECRET: `${STRONG} dev-secret`, WEBHOOK_ADMIN_SECRET: STRONG_TOO };
    expect(findWeakSecrets(config, (name) => env[name])).toMatchObject([
      {
        which: "old",
        message: "the second (old) of the two secrets in WEBHOOK_SECRET is a placeholder from an example, not a secret",
      },
    ]);
    env.WEBHOOK_SECRET = `short ${STRONG}`;
    expect(findWeakSecrets(config, (name) => env[name])).toMatchObject([
      { which: "new", message: "the first (new) of the two secrets in WEBHOOK_SECRET is shorter than 32 characters" },
    ]);
  });

  it("leaves unset, unreadable and malformed variables to preflight, and finds nothing in strong secrets", () => {
    expect(findWeakSecrets(config, () => undefined)).toEqual([]);
    expect(
      findWeakSecrets(config, () => {
        throw new Error("cannot read the file");
      }),
    ).toEqual([]);
    expect(findWeakSecrets(config, (name) => (name === "WEBHOOK_SECRET" ? "a  b" : STRONG))).toEqual([]);
    const env: Record<string, string> = { WEBHOOK_SECRET: `${STRONG} ${STRONG_TOO}`, WEBHOOK_ADMIN_SECRET: STRONG_TOO };
    expect(findWeakSecrets(config, (name) => env[name])).toEqual([]);
  });
});

describe("weakSecretProblems", () => {
  it("gives each weak secret the fix that makes a good one: npx webhook-channel secret", () => {
    const env: Record<string, string> = { WEBHOOK_SECRET: "replace-me", WEBHOOK_ADMIN_SECRET: "changeme" };
    const problems = weakSecretProblems(config, (name) => env[name]);
    expect(problems.map((problem) => problem.path)).toEqual(["channels[0].token_env", "admin.token_env"]);
    expect(problems[0]?.fix).toBe(
      'export WEBHOOK_SECRET="$(npx webhook-channel secret)" (a new inbound secret; give the same value to the clients)',
    );
    expect(problems[1]?.fix).toBe(
      'export WEBHOOK_ADMIN_SECRET="$(npx webhook-channel secret)" (a new admin secret, not any channel\'s)',
    );
  });

  it("tells to finish the rotation when only the old secret is weak", () => {
    const env: Record<string, string> = { WEBHOOK_SECRET: `${STRONG} replace-me`, WEBHOOK_ADMIN_SECRET: STRONG_TOO };
    expect(weakSecretProblems(config, (name) => env[name])[0]?.fix).toContain("finish the rotation");
  });
});
