import {
  type ColumnMetadata,
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
 * `information_schema` about the store's schema alone.
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

  /** The store schema's tables with their columns, as kysely's own introspector describes them. */
  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      table_name: string;
      table_type: string;
      column_name: string | null;
      udt_name: string | null;
      is_nullable: string | null;
      column_default: string | null;
      is_identity: string | null;
    }>`
      select t.table_name, t.table_type, c.column_name, c.udt_name, c.is_nullable, c.column_default, c.is_identity
      from information_schema.tables t
      left join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
      where t.table_schema = ${this.schema}
      order by t.table_name, c.ordinal_position`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: ColumnMetadata[] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.has(row.table_name)) continue;
      let table = tables.get(row.table_name);
      if (table === undefined) {
        table = {
          name: row.table_name,
          schema: this.schema,
          isView: row.table_type === "VIEW",
          isForeign: row.table_type === "FOREIGN",
          columns: [],
        };
        tables.set(row.table_name, table);
      }
      if (row.column_name === null) continue;
      const serial = row.column_default?.startsWith("nextval(") ?? false;
      table.columns.push({
        name: row.column_name,
        dataType: row.udt_name ?? "",
        isNullable: row.is_nullable === "YES",
        isAutoIncrementing: serial || row.is_identity === "YES",
        hasDefaultValue: row.column_default !== null,
      });
    }
    return [...tables.values()];
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
