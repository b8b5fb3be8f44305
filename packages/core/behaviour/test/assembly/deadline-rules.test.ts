import {
  Agent,
  type AnyClass,
  Application,
  AssemblyError,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  createApp,
  Dto,
  type DtoClass,
  days,
  ExpiryOutcome,
  hours,
  memoryStore,
  PauseAnswerer,
  type PauseDeadlines,
  start,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect, test } from "vitest";
import { z } from "zod";
import {
  BoughtDto,
  ClerkApprovalChannel,
  ManagerApprovalChannel,
  PriceQuestionChannel,
  PurchaseApplication,
  PurchaseDesk,
  PurchaseDto,
  QuoteDto,
  TestClerkApprovalChannel,
  TestManagerApprovalChannel,
  TestPriceQuestionChannel,
} from "../../src/fixtures/deadline-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

class OtherDto extends Dto({ sku: z.string() }) {}

/** An application whose one agent has one tool on `channel` with `deadlines`; every other part is sound. */
function appWith(
  channel: AnyClass | undefined,
  deadlines: PauseDeadlines | undefined,
  input: DtoClass = PurchaseDto,
) {
  @Tool({
    name: "checked-tool",
    description: "Checked",
    input,
    output: BoughtDto,
    ...(channel === undefined ? {} : { channel }),
    ...(deadlines === undefined ? {} : { deadlines }),
  })
  class CheckedTool {
    run() {
      return { status: "ok" };
    }
  }
  @Agent({
    name: "checked-agent",
    description: "Checks",
    prompt: "Check.",
    model: "scripted/x",
    tools: [CheckedTool],
  })
  class CheckedAgent {}
  @WorkflowStart({ name: "checked-workflow-start", description: "A request", input: WorkflowStartTextDto })
  class CheckedStart {}
  @WorkflowFinish({
    name: "checked-workflow-finish",
    description: "The answer",
    output: WorkflowFinishTextDto,
  })
  class CheckedFinish {}
  @Workflow({
    name: "checked-workflow",
    version: "1.0.0",
    flow: [start(CheckedStart).returns(WorkflowStartTextDto).toAgent(CheckedAgent).toFinish(CheckedFinish)],
  })
  class CheckedWorkflow {}
  @Application({
    name: "checked-application",
    workflows: [CheckedWorkflow],
    providers: [
      PurchaseDesk,
      ScriptedModelProvider,
      TestClerkApprovalChannel,
      TestManagerApprovalChannel,
      TestPriceQuestionChannel,
      ...extraProviders,
    ],
  })
  class CheckedApplication {}
  return CheckedApplication;
}

@ChannelRole({
  name: "other-approval-channel",
  description: "Approves something else",
  approves: OtherDto,
  answeredBy: PauseAnswerer.Channel,
})
abstract class OtherApprovalChannel extends ChannelOf<OtherApprovalChannel> {}

@ChannelRole({
  name: "loop-approval-channel",
  description: "Escalates back to the clerk",
  approves: PurchaseDto,
  answeredBy: PauseAnswerer.Channel,
  deadlines: { escalate: { after: hours(1), to: ClerkApprovalChannel } },
})
abstract class LoopApprovalChannel extends ChannelOf<LoopApprovalChannel> {}

@Channel({ name: "test-loop-approval-channel", description: "Waits" })
class TestLoopApprovalChannel extends LoopApprovalChannel {
  send(_ask: ChannelAsk<LoopApprovalChannel>): Promise<ChannelOutcome<LoopApprovalChannel>> {
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Channel({ name: "concrete-approval-channel", description: "A channel, not a role" })
class ConcreteApprovalChannel {
  send(): Promise<ChannelOutcome> {
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

const extraProviders: AnyClass[] = [TestLoopApprovalChannel];

async function violationsOf(app: AnyClass): Promise<{ rule: string; message: string }[]> {
  const error = await createApp(app, { store: memoryStore() }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AssemblyError);
  return (error as AssemblyError).violations.map((v) => ({ rule: v.rule, message: v.message }));
}

test("roles and tools with sound deadlines assemble", async () => {
  const app = await createApp(PurchaseApplication, { store: memoryStore() });
  await app.close();
});

test("escalating to a role that approves another input is [channel.escalation-mismatch] at createApp, naming both DTOs", async () => {
  const violations = await violationsOf(
    appWith(ClerkApprovalChannel, { escalate: { after: days(1), to: OtherApprovalChannel } }),
  );
  expect(violations).toEqual([
    {
      rule: "channel.escalation-mismatch",
      message: expect.stringMatching(
        /^the deadlines of CheckedTool \("checked-tool"\): escalate.to cannot answer this tool's calls: OtherApprovalChannel \("other-approval-channel"\) approves OtherDto, but purchase-clerk-approval-channel approves the tool's PurchaseDto; escalate to a role that approves PurchaseDto.$/,
      ),
    },
  ]);
});

test("an approval escalated to a question role, or a question escalated to an approval role, is [channel.escalation-mismatch]", async () => {
  expect(
    (
      await violationsOf(
        appWith(ClerkApprovalChannel, { escalate: { after: days(1), to: PriceQuestionChannel } }),
      )
    ).map((v) => v.rule),
  ).toEqual(["channel.escalation-mismatch"]);
  expect(
    (
      await violationsOf(
        appWith(PriceQuestionChannel, { escalate: { after: days(1), to: ManagerApprovalChannel } }, QuoteDto),
      )
    ).map((v) => v.rule),
  ).toEqual(["channel.escalation-mismatch"]);
});

test("escalating to a concrete channel is [channel.escalation-not-a-role]; a chain that comes back is [channel.escalation-cycle]", async () => {
  expect(
    (
      await violationsOf(
        appWith(ClerkApprovalChannel, { escalate: { after: days(1), to: ConcreteApprovalChannel } }),
      )
    ).map((v) => v.rule),
  ).toEqual(["channel.escalation-not-a-role"]);
  const cycle = await violationsOf(
    appWith(ClerkApprovalChannel, { escalate: { after: days(1), to: LoopApprovalChannel } }),
  );
  expect(cycle).toEqual([
    {
      rule: "channel.escalation-cycle",
      message: expect.stringContaining("ClerkApprovalChannel → LoopApprovalChannel → ClerkApprovalChannel"),
    },
  ]);
});

test("an expiry outcome the role cannot give is [channel.expiry-outcome]: a decision for a question, an answer for an approval, an answer its DTO refuses", async () => {
  const rules = async (channel: AnyClass, outcome: ExpiryOutcome, input: DtoClass = PurchaseDto) =>
    (await violationsOf(appWith(channel, { expire: { after: hours(1), outcome } }, input))).map(
      (v) => v.rule,
    );
  expect(await rules(PriceQuestionChannel, ExpiryOutcome.reject("late"), QuoteDto)).toEqual([
    "channel.expiry-outcome",
  ]);
  expect(await rules(ClerkApprovalChannel, ExpiryOutcome.answer({ amountCents: 1 }))).toEqual([
    "channel.expiry-outcome",
  ]);
  expect(await rules(PriceQuestionChannel, ExpiryOutcome.answer({ amountCents: -5 }), QuoteDto)).toEqual([
    "channel.expiry-outcome",
  ]);
  expect(await rules(ClerkApprovalChannel, { kind: "maybe" } as unknown as ExpiryOutcome)).toEqual([
    "channel.expiry-outcome",
  ]);
});

test("a deadline that is not a positive duration is [channel.deadline-duration]; deadlines on a tool without a channel are [tool.deadlines-without-channel]", async () => {
  expect(
    (await violationsOf(appWith(ClerkApprovalChannel, { remindEvery: hours(0) }))).map((v) => v.rule),
  ).toEqual(["channel.deadline-duration"]);
  expect((await violationsOf(appWith(undefined, { remindEvery: hours(1) }))).map((v) => v.rule)).toEqual([
    "tool.deadlines-without-channel",
  ]);
});
