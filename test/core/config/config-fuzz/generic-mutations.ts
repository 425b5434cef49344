import { isRecord } from "../../../../src/core/is-record.js";
import type { Random } from "../../../shared/seeded-random.js";
import { deepNesting, genJson, genKey, genString, SECRET_KEYS, SECRET_MARKER } from "./fuzz-values.js";
import { type Place, placesOf, putOwn, removeAt, setAt, valueAt, withOwnKey } from "./json-places.js";

// Mutations that know nothing of the schema: they delete, replace, add and rename anywhere in
// the document. Each returns a short label, for the failure message of the document it made.

/** Keys the schema has somewhere, to put where they do not belong. */
const SCHEMA_KEYS = ["channels", "routes", "brains", "webhook", "delivery", "type", "url", "bind", "token_env", "mode"];
/** Keys that mean something to JavaScript objects. */
const OBJECT_KEYS = ["constructor", "prototype", "hasOwnProperty", "toString", "valueOf", "__defineGetter__"];

/** `key` with one typo: a letter dropped, doubled, swapped with the next, or its case changed. */
export function misspell(r: Random, key: string): string {
  if (key.length < 2) return `${key}x`;
  const at = r.int(key.length - 1);
  return r.weighted<string>([
    [1, () => key.slice(0, at) + key.slice(at + 1)],
    [1, () => key.slice(0, at) + key.charAt(at) + key.slice(at)],
    [1, () => key.slice(0, at) + key.charAt(at + 1) + key.charAt(at) + key.slice(at + 2)],
    [1, () => key.toUpperCase()],
    [0.5, () => `${key} `],
  ]);
}

function objects(places: readonly Place[]): Place[] {
  return places.filter((place) => isRecord(valueAt(place)));
}

/** A value to plant under a secret-named key: the marker, bare or wrapped. */
function secretValue(r: Random): unknown {
  return r.pick<unknown>([
    SECRET_MARKER,
    SECRET_MARKER,
    [SECRET_MARKER],
    { value: SECRET_MARKER },
    `x${SECRET_MARKER}`,
  ]);
}

/** One schema-blind mutation of the document in `holder.root`; the label says what it did. */
export function genericMutation(r: Random, holder: { root: unknown }): string {
  const places = placesOf(holder);
  const inner = places.filter((place) => place.path.length > 0);
  const objectPlaces = objects(places);
  const where = (place: Place) => JSON.stringify(place.path);
  return r.weighted<string>([
    [
      3,
      () => {
        const place = r.pick(inner.length > 0 ? inner : places);
        if (place.path.length === 0) return "kept the root";
        removeAt(place);
        return `deleted ${where(place)}`;
      },
    ],
    [
      4,
      () => {
        const place = r.pick(places);
        setAt(place, genJson(r));
        return `replaced ${where(place)}`;
      },
    ],
    [
      3,
      () => {
        const place = r.pick(objectPlaces.length > 0 ? objectPlaces : places);
        const target = valueAt(place);
        if (!isRecord(target)) return "no object";
        const siblings = Object.keys(target);
        const key = r.weighted<string>([
          [3, () => misspell(r, siblings.length > 0 ? r.pick(siblings) : "channels")],
          [2, () => r.pick(SCHEMA_KEYS)],
          [1, () => r.pick(OBJECT_KEYS)],
          [2, () => genKey(r)],
        ]);
        putOwn(target, key, genJson(r, 1));
        return `added ${JSON.stringify(key)} at ${where(place)}`;
      },
    ],
    [
      2,
      () => {
        const place = r.pick(objectPlaces.length > 0 ? objectPlaces : places);
        const target = valueAt(place);
        const keys = isRecord(target) ? Object.keys(target) : [];
        if (!isRecord(target) || keys.length === 0) return "nothing to rename";
        const key = r.pick(keys);
        const renamed = misspell(r, key);
        const value = target[key];
        delete target[key];
        putOwn(target, renamed, value);
        return `renamed ${JSON.stringify(key)} to ${JSON.stringify(renamed)} at ${where(place)}`;
      },
    ],
    [
      2,
      () => {
        const place = r.pick(objectPlaces.length > 0 ? objectPlaces : places);
        const target = valueAt(place);
        if (!isRecord(target)) return "no object";
        const key = r.pick(SECRET_KEYS);
        putOwn(target, key, secretValue(r));
        return `planted a secret under ${JSON.stringify(key)} at ${where(place)}`;
      },
    ],
    [
      2,
      () => {
        // A secret pasted where a variable's name goes: in an *_env key, given or new.
        const envPlaces = inner.filter((place) => typeof place.key === "string" && place.key.endsWith("_env"));
        if (envPlaces.length > 0 && r.chance(0.7)) {
          const place = r.pick(envPlaces);
          setAt(place, r.pick([SECRET_MARKER, `${SECRET_MARKER}-x`, ` ${SECRET_MARKER}`]));
          return `a secret in ${where(place)}`;
        }
        // Not as a brain's name: a brain called "token_env" is no variable's name.
        const hosts = objectPlaces.filter((place) => JSON.stringify(place.path) !== '["brains"]');
        const place = r.pick(hosts.length > 0 ? hosts : places);
        const target = valueAt(place);
        if (!isRecord(target)) return "no object";
        const key = r.pick(["token_env", "api_key_env", "signing_secret_env", "ca_env", "postgres_url_env"]);
        target[key] = SECRET_MARKER;
        return `a secret in a new ${key} at ${where(place)}`;
      },
    ],
    [
      1.5,
      () => {
        const place = r.pick(objectPlaces.length > 0 ? objectPlaces : places);
        const target = valueAt(place);
        if (!isRecord(target)) return "no object";
        const value = r.pick<unknown>([{}, null, 1, { channels: [], polluted: true }, { type: "echo" }, ["x"]]);
        try {
          setAt(place, withOwnKey(target, "__proto__", value));
        } catch {
          return "too deep to write as JSON";
        }
        return `an own __proto__ key at ${where(place)}`;
      },
    ],
    [
      1,
      () => {
        const place = r.pick(places);
        const depth = r.pick([3, 30, 31, 32, 33, 40, 5_000]);
        setAt(place, deepNesting(r, depth, r.chance(0.5) ? 1 : "deep"));
        return `nested ${depth} deep at ${where(place)}`;
      },
    ],
    [
      1.5,
      () => {
        const place = r.pick(places);
        setAt(
          place,
          r.pick<unknown>([[], {}, [[]], [{}], [null], genString(r), Array.from({ length: 2_000 }, (_, i) => i)]),
        );
        return `emptied or filled ${where(place)}`;
      },
    ],
  ]);
}
