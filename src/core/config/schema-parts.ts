import { z } from "zod";
import { hasUserinfo, isHttpUrl } from "../http/http-url.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The name of an environment variable that holds a secret (`token_env`, `api_key_env`, …). */
export const envName = (example: string) =>
  z.string({ error: `must be the name of an environment variable, e.g. ${example}` }).regex(ENV_NAME, {
    error: `must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*), e.g. ${example}`,
  });

/** An absolute http(s) URL without user:password, since secrets belong in the environment. */
export const httpUrl = (example: string) => {
  const error = `must be an absolute http: or https: URL, e.g. "${example}"`;
  return z
    .string({ error })
    .refine(isHttpUrl, { error })
    .refine((value) => !hasUserinfo(value), {
      error: "must not contain a user name or password; secrets belong in the environment (use a *_env key)",
    });
};
