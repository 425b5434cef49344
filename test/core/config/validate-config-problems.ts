import { validateConfig } from "../../../src/core/config/validate-config.js";

/**
 * The problems validateConfig finds in `document`, for the validate-config*.test.ts files; a
 * document it accepts fails the test here, so no test can pass by checking an empty list.
 */
export function problemsOf(document: unknown): { path: string; message: string; fix: string }[] {
  const result = validateConfig(document);
  if (result.ok) throw new Error("expected the configuration to be rejected");
  return [...result.problems];
}

/** The problems of a configuration of one channel, `webhook`, whose `webhook` settings are `webhook`. */
export function webhookProblemsOf(webhook: Record<string, unknown>): { path: string; message: string; fix: string }[] {
  return problemsOf({
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
}
