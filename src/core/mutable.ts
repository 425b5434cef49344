/**
 * `T` with its fields writable: for an object built field by field (an optional field only when
 * it has a value, which `exactOptionalPropertyTypes` wants) before it is handed on as `T`.
 */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
