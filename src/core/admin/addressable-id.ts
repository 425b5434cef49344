/**
 * Whether `id` can be sent as one segment of a URL path. Every URL parser (a browser's, fetch's)
 * reads `.` and `..`, even written `%2e`, as the path's dot segments: `/admin/dead-letters/./replay`
 * asks for `/admin/dead-letters/replay`, the replay of every letter, and `/admin/messages/..` for
 * the console's page. The service never gives a message or a letter such an id, so a client
 * answers "not found" for it without asking.
 */
export function addressableId(id: string): boolean {
  return id !== "." && id !== "..";
}
