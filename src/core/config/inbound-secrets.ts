import { ChannelError } from "../channel-error.js";

// One secret: visible ASCII, what a Bearer token in an HTTP header carries the same way on every
// runtime (Latin-1 bytes are read one per character on Node and as UTF-8 on workerd).
const SECRET = /^[\x21-\x7e]+$/;

/**
 * The inbound secrets in the value of a channel's `token_env`: one, or two separated by one
 * space while a secret is rotated (the new and the old, both accepted; the convention of
 * `signing_secret_env`). Anything else is a `config_invalid` ChannelError that names the
 * variable and never the value: more than two parts, an empty part (a leading, trailing or
 * double space), or a character a header cannot carry (a trailing newline from a file).
 */
export function parseInboundSecrets(value: string, variable: string): readonly string[] | ChannelError {
  const invalid = (reason: string) =>
    new ChannelError("config_invalid", `environment variable ${variable} ${reason}`, { variable });
  if (value === "") return invalid("is empty");
  const parts = value.split(" ");
  if (parts.includes("")) {
    return invalid(
      "has an empty part (a leading, trailing or double space): it must hold one secret, or two separated by one space while rotating",
    );
  }
  if (parts.length > 2) {
    return invalid(
      `holds ${parts.length} space-separated parts: it must hold one secret, or two (the new and the old) separated by one space while rotating`,
    );
  }
  if (!parts.every((part) => SECRET.test(part))) {
    // Beyond ASCII is a secret that cannot work, not a stray character: it takes a new one.
    if ([...value].some((char) => (char.codePointAt(0) ?? 0) > 0x7f)) {
      return invalid(
        "contains characters beyond ASCII, which an HTTP header cannot carry the same way on every runtime: make a new secret with `webhook-channel secret` and give it to the clients (see docs/security.md on rotating it)",
      );
    }
    return invalid(
      "contains whitespace other than the one space between two secrets, or characters an HTTP header cannot carry (a trailing newline?)",
    );
  }
  return parts;
}
