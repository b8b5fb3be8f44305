import type { Kysely } from "kysely";
import type { StoreDialectCapabilities } from "../store-dialect-capabilities.js";

/** One step of the store's schema. Its position in {@link STORE_MIGRATIONS} is its version. */
export interface StoreMigration {
  /** A short description, recorded beside the version. */
  readonly name: string;
  /** Applies the step; `capabilities` supply the dialect's type names. */
  up(db: Kysely<unknown>, capabilities: StoreDialectCapabilities): Promise<void>;
}
