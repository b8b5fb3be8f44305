import { join } from "node:path";
import { memoryStore, type StoreFactory } from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { agbossApplicationName, langgraphApplicationName } from "./postgres.js";
import type { ScenarioContext } from "./scenarios/scenario.js";

// Where each side of a pair scenario keeps its state, per `--backend`: AGBoss's store and the raw
// LangGraph side's checkpointer, on the same kind of database and with the same durability.

/** The raw LangGraph side's checkpointer, opened and ready. */
export interface LangGraphCheckpointer {
  readonly saver: BaseCheckpointSaver;
  /** Closes the database handle or pool it opened. */
  close(): Promise<void>;
  /** What it runs on, for the scenario's notes (read after the run). */
  describe(): string;
}

/** The two sides' state, for one pair scenario. */
export interface PairBackend {
  /** The store factory for AGBoss's `createApp`. */
  readonly agbossStore: StoreFactory;
  /** What the AGBoss store runs on, for the notes. */
  readonly agbossDescription: string;
  /** Opens the LangGraph side's checkpointer (on Postgres: and creates its tables). */
  openCheckpointer(): Promise<LangGraphCheckpointer>;
  /** Under which key `--trace-store`'s SQL tracer files each side's statements; undefined in memory. */
  readonly sqlKeys: { readonly agboss: string; readonly langgraph: string } | undefined;
}

/** The sides' state for a scenario whose AGBoss application is named `appName`. */
export function pairBackend(context: ScenarioContext, appName: string): PairBackend {
  switch (context.backend) {
    case "memory":
      return {
        agbossStore: memoryStore(),
        agbossDescription: "memoryStore()",
        openCheckpointer: () =>
          Promise.resolve({ saver: new MemorySaver(), close: async () => {}, describe: () => "MemorySaver" }),
        sqlKeys: undefined,
      };
    case "sqlite": {
      const agbossPath = join(context.dir, "agboss.sqlite");
      const langgraphPath = join(context.dir, "langgraph.sqlite");
      const { synchronous, walCheckpoints } = context;
      return {
        agbossStore: sqliteStore(
          synchronous === "default"
            ? { path: agbossPath, walCheckpoints }
            : { path: agbossPath, synchronous, walCheckpoints },
        ),
        agbossDescription: `sqliteStore at ${agbossPath} (synchronous=${synchronous === "default" ? "FULL, the store's default" : synchronous}, WAL checkpoints ${walCheckpoints})`,
        openCheckpointer: () => {
          const saver = SqliteSaver.fromConnString(langgraphPath);
          if (synchronous !== "default") saver.db.pragma(`synchronous = ${synchronous}`);
          const read = (name: string) => String(saver.db.pragma(name, { simple: true }));
          return Promise.resolve({
            saver,
            close: async () => {
              saver.db.close();
            },
            describe: () =>
              `SqliteSaver at ${langgraphPath} (journal_mode=${read("journal_mode")}, synchronous=${read("synchronous")})`,
          });
        },
        sqlKeys: { agboss: agbossPath, langgraph: langgraphPath },
      };
    }
    case "postgres": {
      const target = context.postgres;
      if (target === undefined) throw new Error("--backend postgres needs a server (the runner opens one)");
      return {
        agbossStore: postgresStore({ connectionString: target.url, schema: target.schemas.agboss }),
        agbossDescription: `postgresStore, schema ${target.schemas.agboss}, its own pool (10 connections) on ${target.describe}`,
        async openCheckpointer() {
          const saver = PostgresSaver.fromConnString(target.langgraphUrl, {
            schema: target.schemas.langgraph,
          });
          try {
            await saver.setup();
          } catch (error) {
            await saver.end();
            throw error;
          }
          return {
            saver,
            close: () => saver.end(),
            describe: () =>
              `PostgresSaver.fromConnString, schema ${target.schemas.langgraph}, its own pool (pg's default, 10 connections) on the same server`,
          };
        },
        sqlKeys: { agboss: agbossApplicationName(target.url, appName), langgraph: langgraphApplicationName },
      };
    }
  }
}
