import { join } from "node:path";
import {
  type AnyClass,
  Application,
  ChannelOf,
  ChannelRole,
  componentOf,
  DecidedBy,
  Dto,
  PauseAnswerer,
  ReplyInterpreter,
  Tool,
} from "@agboss/core";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runCli } from "../src/cli.js";
import { typedComponents } from "../src/component-graph.js";
import { type ClassHome, moduleSpecifier } from "../src/module-index.js";
import { renderDeclarations } from "../src/render-declarations.js";

class AmountDto extends Dto({ cents: z.number() }) {}
class DoneDto extends Dto({ ok: z.boolean() }) {}

@ReplyInterpreter({ name: "pay-reply-interpreter", description: "Reads replies", decidedBy: DecidedBy.Code })
class PayReplyInterpreter {}

@ChannelRole({
  name: "pay-approval-channel",
  description: "Approves payments",
  approves: AmountDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: PayReplyInterpreter,
})
abstract class PayApprovalChannel extends ChannelOf<PayApprovalChannel> {}

@Tool({
  name: "pay-tool",
  description: "Pays",
  input: AmountDto,
  output: DoneDto,
  channel: PayApprovalChannel,
})
class PayTool {}

@Application({ name: "pay-application", workflows: [], providers: [] })
class PayApplication {}

function output() {
  const lines = { out: [] as string[], err: [] as string[] };
  return { lines, io: { out: (l: string) => lines.out.push(l), err: (l: string) => lines.err.push(l) } };
}

describe("agboss CLI", () => {
  test("module specifiers are relative to the output file, .ts written as .js", () => {
    const out = join("/app", ".agboss");
    expect(moduleSpecifier(out, join("/app", "src", "refund.tool.ts"))).toBe("../src/refund.tool.js");
    expect(moduleSpecifier(out, join("/app", ".agboss", "x.mts"))).toBe("./x.mjs");
    expect(moduleSpecifier(out, join("/app", "dist", "y.js"))).toBe("../dist/y.js");
  });

  test("a usage error exits 2 with the usage; --help exits 0", async () => {
    const wrong = output();
    expect(await runCli(["typez", "x.ts"], wrong.io)).toBe(2);
    expect(wrong.lines.err.join("\n")).toContain("Usage: agboss types <entry module>");
    const help = output();
    expect(await runCli(["--help"], help.io)).toBe(0);
    expect(help.lines.out.join("\n")).toContain("--export <ApplicationClassName>");
  });

  test("a missing entry is one message, exit 1", async () => {
    const missing = output();
    expect(await runCli(["types", "no/such/app.ts"], missing.io)).toBe(1);
    expect(missing.lines.err).toEqual([expect.stringContaining("does not exist")]);
  });

  test("an application that reaches nothing types nothing", () => {
    expect(typedComponents(PayApplication, componentOf)).toEqual([]);
  });

  test("a class no module exports is reported by name, all at once", () => {
    const reached = [
      {
        target: PayTool,
        kind: "tool",
        input: { kind: "class", target: AmountDto },
        output: { kind: "class", target: DoneDto },
      },
    ] as const;
    const homes = new Map([[PayTool, { specifier: "./pay.js", exportName: "PayTool" }]]);
    expect(() => renderDeclarations(reached, { command: "agboss types app.ts", homes })).toThrow(
      /AmountDto \(a DTO\)\n.*DoneDto \(a DTO\)/,
    );
  });

  test("a role reached through a provider's channel types the role and its reply interpreter", () => {
    class PayChannel extends PayApprovalChannel {
      send(): never {
        throw new Error("unused");
      }
    }
    const read = (target: unknown) =>
      target === PayApplication
        ? {
            kind: "application" as const,
            target: PayApplication,
            options: { workflows: [], providers: [PayChannel] },
          }
        : componentOf(target);
    const components = typedComponents(PayApplication, read);
    expect(components.map((c) => [c.target, c.kind])).toEqual([
      [PayApprovalChannel, "channel-role"],
      [PayReplyInterpreter, "reply-interpreter"],
    ]);
    const homes = new Map<AnyClass, ClassHome>([
      [PayApprovalChannel, { specifier: "../src/pay.js", exportName: "PayApprovalChannel" }],
      [PayReplyInterpreter, { specifier: "../src/pay.js", exportName: "PayReplyInterpreter" }],
      [AmountDto, { specifier: "../src/dtos.js", exportName: "AmountDto" }],
    ]);
    const text = renderDeclarations(components, {
      command: "agboss types src/app.ts",
      homes,
    });
    expect(text).toContain(
      'import type { ReplyInterpreterInput, ToolCallApprovalDecisionDto } from "@agboss/core";',
    );
    expect(text).toContain('import type { AmountDto } from "../src/dtos.js";');
    expect(text).toContain(
      "readonly __agbossTypes?: { readonly input: ReplyInterpreterInput<AmountDto>; readonly output: ToolCallApprovalDecisionDto };",
    );
  });

  test("a question role types its ask as input and its answer DTO as output, for the role and its interpreter", () => {
    class SplitDto extends Dto({ payNowCents: z.number() }) {}
    @ReplyInterpreter({ name: "split-reply-interpreter", description: "Reads", decidedBy: DecidedBy.Code })
    class SplitReplyInterpreter {}
    @ChannelRole({
      name: "split-channel",
      description: "Asks how to split a payment",
      ask: AmountDto,
      answer: SplitDto,
      answeredBy: PauseAnswerer.Channel,
      replyInterpreter: SplitReplyInterpreter,
    })
    abstract class SplitChannel extends ChannelOf<SplitChannel> {}
    class ChatSplitChannel extends SplitChannel {
      send(): never {
        throw new Error("unused");
      }
    }
    const read = (target: unknown) =>
      target === PayApplication
        ? {
            kind: "application" as const,
            target: PayApplication,
            options: { workflows: [], providers: [ChatSplitChannel] },
          }
        : componentOf(target);
    const components = typedComponents(PayApplication, read);
    expect(components).toEqual([
      {
        target: SplitChannel,
        kind: "channel-role",
        input: { kind: "class", target: AmountDto },
        output: { kind: "class", target: SplitDto },
      },
      {
        target: SplitReplyInterpreter,
        kind: "reply-interpreter",
        input: { kind: "reply-input", arguments: { kind: "class", target: AmountDto } },
        output: { kind: "class", target: SplitDto },
      },
    ]);
  });
});
