/** Printable ASCII, the space included. */
export const PRINTABLE =
  " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";

/** The characters of an HTTP token (a method name). */
export const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Characters a path may or may not carry: reserved, unsafe and non-ASCII ones among them. */
export const PATH_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%?#[] \\\"<>^`{|}é中😀";
