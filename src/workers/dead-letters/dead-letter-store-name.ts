/**
 * The name of the one dead-letter store instance (`idFromName`): every channel's dead letters
 * are listed together. A module of its own, so that the parts that only address the store do
 * not import the object (and, through it, the Worker's parts).
 */
export const DEAD_LETTER_STORE_NAME = "dead-letters";
