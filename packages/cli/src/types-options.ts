/** What `agboss types` takes. */
export interface TypesOptions {
  /** The module that exports the `@Application` class: a TypeScript source or built JavaScript. */
  readonly entry: string;
  /** The name the application class is exported under; needed only when the module exports several. */
  readonly exportName?: string;
  /** Where the declarations go. Default `.agboss/types.d.ts`, relative to `cwd`. */
  readonly out?: string;
  /** The directory `entry` and `out` are relative to. Default `process.cwd()`. */
  readonly cwd?: string;
  /** The tsconfig.json tsx reads when it compiles TypeScript sources. Default: tsx's own lookup from `cwd`. */
  readonly tsconfig?: string;
}

/** What `generateTypes` wrote. */
export interface TypesResult {
  /** The absolute path of the declaration file. */
  readonly path: string;
  /** Its text. */
  readonly text: string;
  /** The application class's name. */
  readonly application: string;
  /** How many classes got declarations, by kind. */
  readonly counts: Readonly<Record<TypedKind, number>>;
}

/** The kinds of component the generated file types. */
export type TypedKind = "tool" | "channel-role" | "reply-interpreter" | "workflow-start";
