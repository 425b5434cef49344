/**
 * What the openai-brain*.test.ts files share: an OpenAI-compatible server on port 0 that wants
 * {@link API_KEY}, and the consumer's pipeline over an openai brain that asks it.
 */
import { type BrainHarness, startBrainHarness } from "../../support/brain-harness.js";
import { type OpenAiCompatibleServer, startOpenAiCompatibleServer } from "../../support/openai-compatible-server.js";

/** The key the server wants; long enough that its redacted form shows only the last four characters. */
export const API_KEY = "sk-test-0123456789abcdefSECRET";
/** The system prompt {@link setup} configures, first in every request. */
export const SYSTEM_PROMPT = "You are a terse assistant.";

const open: { close(): Promise<void> }[] = [];

/** Keeps a server or harness a test started, to be closed by {@link closeAll}. */
export function track<T extends { close(): Promise<void> }>(started: T): T {
  open.push(started);
  return started;
}

/** Closes what the test started, last started first: each harness before the server it calls. */
export async function closeAll(): Promise<void> {
  for (let started = open.pop(); started !== undefined; started = open.pop()) await started.close();
}

/**
 * Starts the server and a harness whose channel routes to the openai brain "bot" on it, with the
 * key from `env` and `brain`'s settings over the defaults here.
 */
export async function setup(
  brain: Record<string, unknown> = {},
  env: Record<string, string> = { OPENAI_API_KEY: API_KEY },
): Promise<{ server: OpenAiCompatibleServer; harness: BrainHarness }> {
  const server = track(await startOpenAiCompatibleServer({ apiKey: API_KEY }));
  const harness = track(
    await startBrainHarness({
      brains: {
        bot: {
          type: "openai",
          base_url: server.baseUrl,
          model: "test-model",
          api_key_env: "OPENAI_API_KEY",
          system_prompt: SYSTEM_PROMPT,
          ...brain,
        },
      },
      env,
    }),
  );
  return { server, harness };
}
