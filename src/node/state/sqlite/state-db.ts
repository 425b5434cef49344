import type Database from "better-sqlite3";

/** An open state database. */
export type StateDb = Database.Database;
