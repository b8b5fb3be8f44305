import {
  Agent,
  Application,
  AssemblyError,
  ChannelOf,
  ChannelRole,
  type ChannelRoleOptions,
  createApp,
  Dto,
  Injectable,
  MissingProviderError,
  memoryStore,
  start,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { DoneDto, ExpenseDto } from "../../src/fixtures/approval-app.js";
import { RefundApplication, ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

class NoteDto extends Dto({ note: z.string() }) {}

@Injectable()
class Mailer {}

@Tool({ name: "notify", description: "Sends a note", input: NoteDto, output: NoteDto, deps: [Mailer] })
class NotifyTool {
  run(input: NoteDto) {
    return input;
  }
}

@Agent({
  name: "helper",
  description: "Helps",
  prompt: "Help.",
  model: "nobody/serves-this",
  tools: [NotifyTool],
})
class HelperAgent {}

@WorkflowStart({ name: "help-start", description: "A request", input: WorkflowStartTextDto })
class HelpStart {}

@WorkflowFinish({ name: "help-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class HelpFinish {}

@Workflow({
  name: "help-workflow",
  version: "1.0.0",
  flow: [start(HelpStart).returns(WorkflowStartTextDto).toAgent(HelperAgent).toFinish(HelpFinish)],
})
class HelpWorkflow {}

@Application({ name: "help-application", workflows: [HelpWorkflow] })
class BrokenApplication {}

async function assemblyErrorOf(app: Parameters<typeof createApp>[0]): Promise<AssemblyError> {
  const error = await createApp(app, { store: memoryStore() }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AssemblyError);
  return error as AssemblyError;
}

describe("assembly", () => {
  test("[AS-01] a component's name must end with its kind's suffix", async () => {
    const error = await assemblyErrorOf(BrokenApplication);
    const suffixes = error.violations.filter((v) => v.rule === "name.kind-suffix").map((v) => v.message);
    expect(suffixes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/NotifyTool is a tool named "notify".*"-tool"/),
        expect.stringMatching(/HelperAgent is an agent named "helper".*"-agent"/),
        expect.stringMatching(/HelpStart is a workflow-start named "help-start".*"-workflow-start"/),
      ]),
    );
    expect(suffixes).toHaveLength(3);
    expect(error.message).toContain("[name.kind-suffix]");
  });

  test("[AS-07] assembly fails once, listing every violation with its rule code", async () => {
    const error = await assemblyErrorOf(BrokenApplication);
    const rules = error.violations.map((v) => v.rule);
    expect(rules).toEqual(
      expect.arrayContaining(["name.kind-suffix", "model.unserved", "container.missing-provider"]),
    );
    expect(error.code).toBe("assembly.invalid");
    for (const v of error.violations) expect(error.message).toContain(`[${v.rule}] ${v.message}`);
    expect(error.message).toMatch(/cannot start: 5 problems found/);
  });

  test("an unknown model is [model.unserved] at assembly, saying what to add", async () => {
    const error = await assemblyErrorOf(BrokenApplication);
    const unserved = error.violations.find((v) => v.rule === "model.unserved");
    expect(unserved?.message).toContain('uses model "nobody/serves-this"');
    expect(unserved?.message).toContain(
      "Add a provider whose serves matches it to @Application({ providers })",
    );
  });

  test("a missing provider names the dependency chain and what to add", async () => {
    const error = await assemblyErrorOf(BrokenApplication);
    const missing = error.violations.find((v) => v.rule === "container.missing-provider");
    expect(missing?.message).toContain("No provider for Mailer needed by NotifyTool (argument 0)");
    expect(missing?.message).toContain("NotifyTool(?)");
    expect(missing?.message).toContain("chain: BrokenApplication → HelperAgent → NotifyTool → Mailer");
    expect(missing?.message).toContain(
      "Add Mailer (or a class that extends it) to @Application({ providers: [...] })",
    );
  });

  test("a class without @Application is refused with its own rule", async () => {
    class Plain {}
    const error = await assemblyErrorOf(Plain);
    expect(error.violations.map((v) => v.rule)).toEqual(["application.not-an-application"]);
  });

  test("a well-formed application assembles", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    await app.close();
  });

  test("MissingProviderError is thrown by the container for an unregistered dependency at run time", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    expect(() => app.get(Mailer)).toThrow(MissingProviderError);
    await app.close();
  });
});

test("[AS-06] @ChannelRole({ answeredBy }) is required: leaving it out fails assembly (that it does not compile: assembly-violations.test-d.ts)", async () => {
  // Past the compiler, as plain JavaScript (or a cast) would get it.
  const options = {
    name: "loose-approval-channel",
    description: "Forgot who answers",
    approves: ExpenseDto,
  } as ChannelRoleOptions;
  @ChannelRole(options)
  abstract class LooseApprovalChannel extends ChannelOf<LooseApprovalChannel> {}
  @Tool({
    name: "loose-expense-tool",
    description: "Books",
    input: ExpenseDto,
    output: DoneDto,
    channel: LooseApprovalChannel,
  })
  class LooseExpenseTool {
    run() {
      return { status: "ok" };
    }
  }
  @Agent({
    name: "loose-agent",
    description: "Books",
    prompt: "Book.",
    model: "scripted/x",
    tools: [LooseExpenseTool],
  })
  class LooseAgent {}
  @WorkflowStart({ name: "loose-workflow-start", description: "A request", input: WorkflowStartTextDto })
  class LooseStart {}
  @WorkflowFinish({ name: "loose-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
  class LooseFinish {}
  @Workflow({
    name: "loose-workflow",
    version: "1.0.0",
    flow: [start(LooseStart).toAgent(LooseAgent).toFinish(LooseFinish)],
  })
  class LooseWorkflow {}
  @Application({
    name: "loose-application",
    workflows: [LooseWorkflow],
    providers: [ScriptedModelProvider],
  })
  class LooseApplication {}
  const error = await createApp(LooseApplication, { store: memoryStore() }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AssemblyError);
  const rules = (error as AssemblyError).violations.map((v) => v.rule);
  expect(rules).toContain("channel.no-answerer");
  expect(rules).toContain("container.missing-provider");
  expect(
    (error as AssemblyError).violations.find((v) => v.rule === "channel.no-answerer")?.message,
  ).toContain("There is no default");
});
