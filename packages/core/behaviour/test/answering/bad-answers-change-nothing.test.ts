import { callTool, DtoValidationError, ExecutionStatus, type ResumeOptions, replyWith } from "@agboss/core";
import { expect } from "vitest";
import { frozen, onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { pauseRefund, scriptThread } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackend(OfficeApplication, (test) => {
  test("an overrideArguments field the tool's input does not know is refused, not dropped: nothing is stored", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-typo");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = await app
      .resume(
        {
          pauseId,
          decision: {
            approved: true,
            overrideArguments: { orderId: "ord_1", amountCents: 500, cardNumbr: "4242" },
          },
        },
        manager,
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DtoValidationError);
    expect((error as DtoValidationError).issues.map((i) => i.path)).toEqual(["cardNumbr"]);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("a credential that is missing, or whose tenantId is an object or a list, is a DtoValidationError and stores nothing", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-credential");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const request = { pauseId, decision: { approved: true } };
    for (const credential of [
      undefined,
      { tenantId: { id: "acme" }, answeredBy: "m" },
      { tenantId: ["acme"], answeredBy: "m" },
      { tenantId: "acme", answeredBy: "m".repeat(257) },
    ]) {
      const error = await app
        .resume(request, credential as unknown as ResumeOptions)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DtoValidationError);
    }
    const long = await app
      .resume({ pauseId, decision: { approved: false, reason: "r".repeat(4_001) } }, manager)
      .catch((e: unknown) => e);
    expect(long).toBeInstanceOf(DtoValidationError);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    const answered = await app.resume(request, manager);
    expect(answered.status).toBe(ExecutionStatus.Completed);
  });

  test("execute takes a flat tenantId, and the pause is answered in that tenant", async ({
    app,
    mockLlm,
  }) => {
    scriptThread(
      mockLlm,
      "flat tenant",
      callTool(ApprovedRefundTool, { orderId: "ord_7", amountCents: 700 }),
      replyWith("ok"),
    );
    const paused = await app.execute(
      OfficeWorkflowStart,
      { text: "flat tenant" },
      { ownerId: "alice", tenantId: "globex" },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;
    expect(app.get(Desk).asked.at(-1)?.tenantId).toBe("globex");
    const done = await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: "globex", answeredBy: "m-1" },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const clash = await app
      .execute(
        OfficeWorkflowStart,
        { text: "flat tenant" },
        { ownerId: "alice", tenantId: "a", tenant: { tenantId: "b" } },
      )
      .catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(DtoValidationError);
  });
});
