import { randomBytes } from "node:crypto";
import { ExecutionStatus, type Store } from "@agboss/core";
import { PostgresStore } from "@agboss/store-postgres";
import { SqliteStore } from "@agboss/store-sqlite";
import { testWith } from "@agboss/testing";
import { describe, expect } from "vitest";
import { POSTGRES_TEST_URL, sqliteFile } from "../../src/backends.js";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund } from "../../src/office.js";

// When a channel is asked, the pause and the checkpoint of the step that asks are both in the store,
// as another instance sees it: a process that dies while the question is out is recovered from the
// model's turn that named the call, so the step finds the same pause (the model is not asked again,
// and a real model asked again could name another call). A pass may keep its latest checkpoint in
// memory until something needs it stored; the pause's insert is such a write.

/** What another instance of the store sees of the pause and of the thread's latest checkpoint. */
async function seenBy(observer: Store, pauseId: string, threadKey: string) {
  const pause = await observer.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
  const tuple = await observer.checkpointer.getTuple({ configurable: { thread_id: threadKey } });
  return { pause, checkpointId: tuple?.checkpoint.id };
}

/** A database each test opens twice: once for its app, once as another instance looking at it. */
interface Shared {
  /** The app's store. */
  open(): Promise<Store>;
  /** Another instance's store on the same database. */
  observe(): Promise<Store>;
}

const databases: { name: string; shared: () => Shared }[] = [
  {
    name: "SQLite file",
    shared: () => {
      const path = sqliteFile();
      return { open: () => SqliteStore.open({ path }), observe: () => SqliteStore.open({ path }) };
    },
  },
  {
    name: "Postgres schema",
    shared: () => {
      const schema = `agboss_tests_${randomBytes(6).toString("hex")}`;
      const open = () => PostgresStore.open({ connectionString: POSTGRES_TEST_URL, schema });
      return {
        open: async () => {
          const store = await open();
          return {
            ...store,
            atomically: (work) => store.atomically(work),
            async close() {
              try {
                await store.db.schema.dropSchema(schema).ifExists().cascade().execute();
              } finally {
                await store.close();
              }
            },
          } satisfies Store;
        },
        observe: open,
      };
    },
  },
];

for (const { name, shared } of databases) {
  describe(`on a ${name}`, () => {
    let database: Shared | undefined;
    const test = testWith(OfficeApplication, {
      store: () => {
        database = shared();
        return database.open();
      },
    });

    test("LF-01 when its channel is asked, the pause and the checkpoint of the step that asks are already stored, as another instance sees them", async ({
      app,
      mockLlm,
      store,
    }) => {
      const observer = await (database as Shared).observe();
      try {
        const desk = app.get(Desk);
        const threadKey = "acme/t-stored-before-asked";
        let atSend: Awaited<ReturnType<typeof seenBy>> | undefined;
        desk.sendGate = async (pauseId) => {
          atSend = await seenBy(observer, pauseId, threadKey);
        };
        const { result, pauseId } = await pauseRefund(app, mockLlm, "t-stored-before-asked");
        expect(result.status).toBe(ExecutionStatus.Paused);
        const rested = await store.checkpointer.getTuple({ configurable: { thread_id: threadKey } });

        // The pause, not yet marked sent, and the checkpoint the execution rests on (the interrupt adds
        // pending writes to it, no checkpoint of its own): the one after the model's turn.
        expect(atSend?.pause).toMatchObject({ pauseId, status: "pending", isSent: false });
        expect(atSend?.checkpointId).toBeDefined();
        expect(atSend?.checkpointId).toBe(rested?.checkpoint.id);
      } finally {
        await observer.close();
      }
    });
  });
}
