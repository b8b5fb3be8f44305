import {
  Agent,
  Application,
  AssemblyError,
  Channel,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  createApp,
  DecidedBy,
  memoryStore,
  PauseAnswerer,
  ReplyInterpreter,
  start,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect, test } from "vitest";
import { DoneDto, ExpenseDto, RefundRequestDto } from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

class NotAnInterpreter {}

@ReplyInterpreter({
  name: "lazy-reply-interpreter",
  description: "Forgot interpret",
  decidedBy: DecidedBy.Code,
})
class LazyReplyInterpreter {}

@ReplyInterpreter({ name: "shared-reply-interpreter", description: "Used twice", decidedBy: DecidedBy.Code })
class SharedReplyInterpreter {
  interpret() {
    return undefined as never;
  }
}

function roleWith(
  name: string,
  approves: typeof ExpenseDto | typeof RefundRequestDto,
  replyInterpreter: abstract new (...a: never[]) => unknown,
) {
  @ChannelRole({
    name,
    description: name,
    approves,
    answeredBy: PauseAnswerer.Channel,
    replyInterpreter: replyInterpreter as never,
  })
  abstract class Role extends ChannelOf<Role> {}
  @Channel({ name: `impl-${name}`, description: name })
  class Impl extends Role {
    send() {
      return Promise.resolve(ChannelOutcome.awaitReply<Role>());
    }
  }
  return { Role, Impl };
}

async function violationsOf(
  roles: { Role: abstract new () => unknown; Impl: new () => unknown }[],
): Promise<AssemblyError> {
  const tools = roles.map(({ Role }, i) => {
    @Tool({
      name: `tool-${i}-tool`,
      description: "A tool",
      input: i % 2 === 0 ? ExpenseDto : RefundRequestDto,
      output: DoneDto,
      channel: Role as never,
    })
    class T {
      run() {
        return { status: "ok" };
      }
    }
    return T;
  });
  @Agent({ name: "assembly-agent", description: "Uses the tools", prompt: "p", model: "scripted/x", tools })
  class A {}
  @WorkflowStart({ name: "assembly-workflow-start", description: "s", input: WorkflowStartTextDto })
  class S {}
  @WorkflowFinish({ name: "assembly-workflow-finish", description: "f", output: WorkflowFinishTextDto })
  class F {}
  @Workflow({ name: "assembly-workflow", version: "1.0.0", flow: [start(S).toAgent(A).toFinish(F)] })
  class W {}
  @Application({
    name: "assembly-application",
    workflows: [W],
    providers: [ScriptedModelProvider, ...roles.map((r) => r.Impl)],
  })
  class App {}
  const error = await createApp(App, { store: memoryStore() }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AssemblyError);
  return error as AssemblyError;
}

test("[AS-02] a replyInterpreter class without @ReplyInterpreter is [reply-interpreter.not-an-interpreter]", async () => {
  const error = await violationsOf([roleWith("plain-approval-channel", ExpenseDto, NotAnInterpreter)]);
  const found = error.violations.filter((v) => v.rule === "reply-interpreter.not-an-interpreter");
  expect(found).toHaveLength(1);
  expect(found[0]?.message).toContain(
    "NotAnInterpreter as its replyInterpreter, but it has no @ReplyInterpreter",
  );
});

test("[AS-03] a code interpreter without interpret is [reply-interpreter.no-interpret-method]", async () => {
  const error = await violationsOf([roleWith("lazy-approval-channel", ExpenseDto, LazyReplyInterpreter)]);
  const found = error.violations.find((v) => v.rule === "reply-interpreter.no-interpret-method");
  expect(found?.message).toContain("implement ReplyInterpreterHandler<LazyReplyInterpreter>");
});

test("[AS-04] one interpreter named by two roles is [channel.shared-interpreter], reported with every other violation", async () => {
  const error = await violationsOf([
    roleWith("first-approval-channel", ExpenseDto, SharedReplyInterpreter),
    roleWith("second-approval-channel", RefundRequestDto, SharedReplyInterpreter),
    roleWith("third-approval-channel", ExpenseDto, NotAnInterpreter),
  ]);
  const rules = error.violations.map((v) => v.rule);
  expect(rules.filter((r) => r === "channel.shared-interpreter")).toHaveLength(1);
  expect(rules).toContain("reply-interpreter.not-an-interpreter");
  expect(error.violations.find((v) => v.rule === "channel.shared-interpreter")?.message).toContain(
    "one interpreter belongs to one role",
  );
});
