/** True for an absolute `http:` or `https:` URL. */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === "http:" || protocol === "https:";
}

/** True when a URL carries a user name or password (which would put a secret in the file). */
export function hasUserinfo(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { username, password } = new URL(value);
  return username !== "" || password !== "";
}
