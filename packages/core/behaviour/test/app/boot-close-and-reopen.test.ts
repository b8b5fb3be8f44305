import {
  Application,
  AssemblyError,
  createApp,
  ExecutionStatus,
  Injectable,
  ModelProvider,
  memoryStore,
  replyWith,
  ScriptedChatModel,
  type Store,
} from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { TestClock, testWith } from "@agboss/testing";
import { describe, expect, test, vi } from "vitest";
import { sqliteFile } from "../../src/backends.js";
import { OfficeApplication } from "../../src/fixtures/approval-app.js";
import {
  RefundLedger,
  RefundWorkflow,
  RefundWorkflowStart,
  ScriptedModelProvider,
  scriptedTurns,
} from "../../src/fixtures/refund-app.js";
import { pauseRefund } from "../../src/office.js";

const calls: string[] = [];

@Injectable()
class Lifecycle {
  onInit() {
    calls.push("init");
  }
  onStart() {
    calls.push("start");
  }
  onStop() {
    calls.push("stop");
  }
}

@Application({
  name: "lifecycle-application",
  workflows: [RefundWorkflow],
  providers: [Lifecycle, RefundLedger, ScriptedModelProvider],
})
class LifecycleApplication {}

describe("createApp", () => {
  test("[HW-01] createApp boots once: onInit then onStart, one store, the 30 s sweep on the Clock; close() stops them all", async () => {
    calls.length = 0;
    const clock = new TestClock();
    let opened = 0;
    let closed = 0;
    let store: Store | undefined;
    const app = await createApp(LifecycleApplication, {
      env: "prod",
      clock,
      store: async (ctx) => {
        opened += 1;
        store = await memoryStore()(ctx);
        const close = store.close.bind(store);
        return Object.assign(store, {
          close: async () => {
            closed += 1;
            await close();
          },
        });
      },
    });
    expect(calls).toEqual(["init", "start"]);
    expect(opened).toBe(1);
    const deleteSpy = vi.spyOn((store as Store).pauses, "deleteResolvedBefore");
    await clock.advance(29_999);
    expect(deleteSpy).not.toHaveBeenCalled();
    await clock.advance(1);
    expect(deleteSpy).toHaveBeenCalledWith(clock.now() - 24 * 3_600_000, 10_000);
    await app.close();
    expect(calls).toEqual(["init", "start", "stop"]);
    expect(closed).toBe(1);
    await clock.advance(60_000);
    expect(deleteSpy).toHaveBeenCalledTimes(1);
  });

  test("[HW-01] every @ModelProvider is checked at assembly: one without chatModel is refused", async () => {
    @ModelProvider({ name: "broken-model-provider", serves: ["scripted/*"] })
    class BrokenProvider {}
    @Application({
      name: "broken-provider-application",
      workflows: [RefundWorkflow],
      providers: [RefundLedger, BrokenProvider],
    })
    class BrokenProviderApplication {}
    const error = await createApp(BrokenProviderApplication, { store: memoryStore() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AssemblyError);
    expect((error as AssemblyError).violations.map((v) => v.rule)).toContain(
      "model-provider.no-chat-model-method",
    );
  });
});

describe("durability on one SQLite file", () => {
  test("a thread run by one createApp, closed, is continued by a second createApp over the same file with its whole history", async () => {
    const path = sqliteFile();
    const seen = new ScriptedChatModel([replyWith("Which order?"), replyWith("Refunded ord_7")]);
    scriptedTurns.push((r) => seen.invoke(r));
    const first = await createApp(RefundApplication2(), { store: sqliteStore({ path }) });
    await first.execute(
      RefundWorkflowStart,
      { text: "I want a refund" },
      { threadId: "chat:7", ownerId: "u7", tenant: { tenantId: "acme" } },
    );
    await first.close();
    scriptedTurns.push((r) => seen.invoke(r));
    const second = await createApp(RefundApplication2(), { store: sqliteStore({ path }) });
    const result = await second.execute(
      RefundWorkflowStart,
      { text: "ord_7 please" },
      { threadId: "chat:7", ownerId: "u7", tenant: { tenantId: "acme" }, record: true },
    );
    expect(result.output).toEqual({ text: "Refunded ord_7" });
    expect(seen.requests[1]?.messages.map((m) => m.content)).toEqual([
      "Refund what the customer asks for, then say what you did.",
      "I want a refund",
      "Which order?",
      "ord_7 please",
    ]);
    const history = await second.store.executions.listByTenantIdAndThreadId("acme", "chat:7");
    expect(history.map((h) => h.status)).toEqual([ExecutionStatus.Completed, ExecutionStatus.Completed]);
    await second.close();
  });
});

function RefundApplication2() {
  return OfficeApplicationOrRefund;
}
@Application({
  name: "durable-refund-application",
  workflows: [RefundWorkflow],
  providers: [RefundLedger, ScriptedModelProvider],
})
class OfficeApplicationOrRefund {}

const sqliteTest = testWith(OfficeApplication, { store: () => sqliteStore({ path: sqliteFile() }) });
sqliteTest(
  "a pause written by one process is answered by another connection to the same SQLite file",
  async ({ app, mockLlm, store }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-cross");
    const path = (store as Store & { path?: string }).path as string;
    expect(path).toMatch(/agboss\.sqlite$/);
    await app.close();
    const fresh = await createApp(OfficeApplication, { store: sqliteStore({ path }), modelsScripted: true });
    const { appInternals } = await import("@agboss/core/internal");
    appInternals(fresh).models.setFallback(() => new ScriptedChatModel([replyWith("Refund handled")]));
    const result = await fresh.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Refund handled" });
    await fresh.close();
  },
);
