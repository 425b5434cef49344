/** Where the tab keeps the admin secret (session storage: this tab only, gone when it closes). */
const SECRET_KEY = "webhook-channel-admin-secret";

/** One answer of the admin API: its status, its body parsed as JSON (null if it is not), and its text. */
export interface ApiAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly data: unknown;
  readonly text: string;
}

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
  try {
    data = text === "" ? null : (JSON.parse(text) as unknown);
  } catch {
    data = null;
  }
  return { status: response.status, ok: response.ok, data, text };
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
  return `${answer.status} ${answer.text}`;
}
