import {
  Agent,
  AgentFailedError,
  ANSWER_TOOL_NAME,
  Application,
  Dto,
  replyWith,
  StepFailedError,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { testWith } from "@agboss/testing";
import { expect } from "vitest";
import { z } from "zod";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

class VerdictDto extends Dto({ refundable: z.boolean(), reason: z.string().min(3) }) {}

@Agent({
  name: "verdict-agent",
  description: "Decides",
  prompt: "Decide.",
  model: "scripted/x",
  output: VerdictDto,
  maxValidationAttempts: 1,
})
class VerdictAgent {}
@WorkflowStart({ name: "verdict-workflow-start", description: "A case", input: WorkflowStartTextDto })
class VerdictStart {}
@WorkflowFinish({ name: "verdict-workflow-finish", description: "The verdict", output: VerdictDto })
class VerdictFinish {}
@WorkflowStart({
  name: "mismatch-workflow-start",
  description: "A case ending in text",
  input: WorkflowStartTextDto,
})
class MismatchStart {}
@WorkflowFinish({ name: "text-workflow-finish", description: "A text", output: WorkflowFinishTextDto })
class TextFinish {}
@Workflow({
  name: "verdict-workflow",
  version: "1.0.0",
  flow: [
    start(VerdictStart).toAgent(VerdictAgent).toFinish(VerdictFinish),
    start(MismatchStart).toAgent(VerdictAgent).toFinish(TextFinish),
  ],
})
class VerdictWorkflow {}
@Application({
  name: "verdict-application",
  workflows: [VerdictWorkflow],
  providers: [ScriptedModelProvider],
})
class VerdictApplication {}

const test = testWith(VerdictApplication);

test("an agent with an output DTO answers through the answer tool; an invalid answer is returned to the model once more", async ({
  app,
  mockLlm,
}) => {
  const script = mockLlm(VerdictAgent).thenReturn(
    replyWith(VerdictDto, { refundable: true, reason: "x" }),
    replyWith(VerdictDto, { refundable: true, reason: "parcel lost" }),
  );
  const result = await app.execute(VerdictStart, { text: "case 1" }, { ownerId: "u" });
  expect(result.output).toEqual({ refundable: true, reason: "parcel lost" });
  expect(script.calls[0]?.tools.map((t) => t.name)).toEqual([ANSWER_TOOL_NAME]);
  expect(script.calls[0]?.toolChoice).toBe("required");
  expect(script.calls[1]?.messages.at(-1)?.content).toMatch(/^Tool error: invalid answer: reason: /);
});

test("an accepted answer-tool call gets its tool reply in the conversation, so the thread's next execution sends no call without one", async ({
  app,
  mockLlm,
}) => {
  const script = mockLlm(VerdictAgent).thenReturn(
    replyWith(VerdictDto, { refundable: true, reason: "parcel lost" }),
    replyWith(VerdictDto, { refundable: false, reason: "too late" }),
  );
  await app.execute(VerdictStart, { text: "case 1" }, { ownerId: "u", threadId: "t-verdicts" });
  await app.execute(VerdictStart, { text: "case 2" }, { ownerId: "u", threadId: "t-verdicts" });
  const second = script.calls[1]?.messages ?? [];
  const calls = second.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
  expect(calls).toHaveLength(1);
  for (const call of calls) {
    expect(second.some((m) => m.role === "tool" && m.toolCallId === call.id)).toBe(true);
  }
});

test("an agent whose model keeps answering invalidly fails after its validation attempts", async ({
  app,
  mockLlm,
}) => {
  mockLlm(VerdictAgent).thenReturn(replyWith("I think yes"), replyWith("still text"));
  const error = await app
    .execute(VerdictStart, { text: "case 2" }, { ownerId: "u" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AgentFailedError);
  expect((error as Error).message).toContain("gave 2 invalid answers");
});

test("a last step whose output does not fit the finish's DTO fails the execution, recorded as failed", async ({
  app,
  mockLlm,
}) => {
  mockLlm(VerdictAgent).thenReturn(replyWith(VerdictDto, { refundable: false, reason: "not eligible" }));
  const error = await app
    .execute(MismatchStart, { text: "case 3" }, { ownerId: "u", threadId: "t-mismatch" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StepFailedError);
  expect((error as Error).message).toContain("no valid WorkflowFinishTextDto");
  const thread = await app.store.threads.findByTenantIdAndThreadId("default", "t-mismatch");
  expect((await app.record(thread?.latestExecutionId as string))?.status).toBe("failed");
});
