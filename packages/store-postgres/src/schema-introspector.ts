import {
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";

/** kysely's own bookkeeping tables, hidden unless asked for (as kysely's own introspector does). */
const KYSELY_TABLES = new Set(["kysely_migration", "kysely_migration_lock"]);

/**
 * Sees only the store's schema. kysely's Postgres introspector reads every schema of the database and
 * checks its privileges on each, so a schema another process drops at that moment (a test run, a
 * tenant's cleanup) fails a migration that has nothing to do with it. This one asks
 * `information_schema` about the store's schema alone; the migrator only needs table names.
 * @internal
 */
class SchemaIntrospector implements DatabaseIntrospector {
  constructor(
    // biome-ignore lint/suspicious/noExplicitAny: the introspector reads catalog views, not the store's tables
    private readonly db: Kysely<any>,
    private readonly schema: string,
  ) {}

  /** The store's schema when it exists (nothing else is looked at). */
  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select schema_name as name from information_schema.schemata where schema_name = ${this.schema}`.execute(
      this.db,
    );
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; type: string }>`
      select table_name as name, table_type as type
      from information_schema.tables
      where table_schema = ${this.schema}
      order by table_name`.execute(this.db);
    return rows
      .filter((row) => options.withInternalKyselyTables || !KYSELY_TABLES.has(row.name))
      .map((row) => ({
        name: row.name,
        schema: this.schema,
        isView: row.type === "VIEW",
        isForeign: row.type === "FOREIGN",
        columns: [],
      }));
  }
}

/** kysely's Postgres dialect, with an introspector that sees only `schema`. @internal */
export class SchemaScopedPostgresDialect extends PostgresDialect {
  readonly #schema: string;

  constructor(config: PostgresDialectConfig, schema: string) {
    super(config);
    this.#schema = schema;
  }

  // biome-ignore lint/suspicious/noExplicitAny: matches kysely's Dialect signature
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.#schema);
  }
}
