import { ChannelError, type FieldError } from "../channel-error.js";
import { type IdempotencyStore, MAX_IDEMPOTENCY_KEY_LENGTH } from "../idempotency/idempotency-store.js";

const FIELD = "Idempotency-Key";
const PROBLEM: FieldError = {
  field: FIELD,
  message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`,
};

/**
 * Printable ASCII, the characters of the IETF draft's key (an sf-string). Runtimes read other
 * header bytes differently (Node one character per byte, workerd as UTF-8 with U+FFFD for what
 * is not), so a key outside it would be counted, and told apart from another, by the runtime.
 */
const KEY = /^[ -~]+$/;

/** Why a request's `Idempotency-Key` is refused; undefined when it is fine, absent, or no store keeps keys. */
function keyProblem(header: string | null, store: IdempotencyStore | undefined): FieldError | undefined {
  if (header === null || store === undefined) return undefined;
  return header.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY.test(header) ? PROBLEM : undefined;
}

/** The request's key; a 400 `invalid_message` naming it when refused. */
export function readIdempotencyKey(header: string | null, store: IdempotencyStore | undefined): string | undefined {
  const problem = keyProblem(header, store);
  if (problem !== undefined) {
    throw new ChannelError("invalid_message", `The ${FIELD} header ${problem.message}.`, {
      status: 400,
      errors: [problem],
    });
  }
  return header ?? undefined;
}

/**
 * A message refused for its fields (`invalid_message`) names a refused key too, so that one 400
 * tells the client everything to fix; any other error is returned as it is.
 */
export function alsoNamingKey(error: unknown, header: string | null, store: IdempotencyStore | undefined): unknown {
  const problem = keyProblem(header, store);
  if (problem === undefined || !(error instanceof ChannelError) || error.code !== "invalid_message") return error;
  return new ChannelError("invalid_message", `${error.message.replace(/\.$/, "")}, ${FIELD}.`, {
    status: 400,
    errors: [...(error.errors ?? []), problem],
  });
}
