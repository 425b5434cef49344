/** Where the tab keeps the admin secret (session storage: this tab only, gone when it closes). */
const SECRET_KEY = "webhook-channel-admin-secret";

/**
 * One answer of the admin API: its status, its body parsed as JSON (null if it is not), and its
 * text. `ok` holds only for a 2xx whose body is JSON or empty: anything else (an HTML page from a
 * proxy, or the console's own page for a path the browser rewrote) is not the API's answer.
 */
export interface ApiAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly data: unknown;
  readonly text: string;
}

/** How much of a body that is not the API's JSON a sentence quotes. */
const TEXT_LIMIT = 200;

/** The secret this tab signed in with, or null. */
export function secret(): string | null {
  return sessionStorage.getItem(SECRET_KEY);
}

/** Keeps the secret for this tab; null forgets it. */
export function keepSecret(value: string | null): void {
  if (value === null) sessionStorage.removeItem(SECRET_KEY);
  else sessionStorage.setItem(SECRET_KEY, value);
}

/**
 * One call to the admin API with the tab's secret. The secret leaves only in this header, to
 * this origin: no cookie, no referrer, nothing cached.
 */
export async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${secret() ?? ""}` };
  const init: RequestInit = { method, headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data: unknown = null;
  let json = true;
  try {
    data = text === "" ? null : (JSON.parse(text) as unknown);
  } catch {
    json = false;
  }
  return { status: response.status, ok: response.ok && json, data, text };
}

/** Whether `value` can be sent as the secret: a browser refuses a header with characters beyond Latin-1 (a typographic quote, say). */
export function sendable(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

/** What the API answered, for a person: a problem's code and detail, else the status and body. */
export function describe(answer: ApiAnswer): string {
  const { data } = answer;
  if (typeof data === "object" && data !== null && "detail" in data && typeof data.detail === "string") {
    const code = "code" in data && typeof data.code === "string" && data.code !== "" ? data.code : undefined;
    const title = "title" in data && typeof data.title === "string" ? data.title : "";
    return `${answer.status} ${code ?? title}: ${data.detail}`;
  }
  if (answer.text === "") return `${answer.status} (no body)`;
  if (data === null && answer.text.trim() !== "null") {
    // Not the API's JSON: a proxy's error page, say; its markup would only clutter the sentence.
    const plain = answer.text
      .replace(/<[^>]*>/g, " ")
      .replace(/\s+/g, " ")
      .trim();
    const short = plain.length > TEXT_LIMIT ? `${plain.slice(0, TEXT_LIMIT)}…` : plain;
    return `${answer.status}, not the API's JSON${short === "" ? "" : `: ${short}`}`;
  }
  return `${answer.status} ${answer.text}`;
}
