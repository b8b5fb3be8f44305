import { AgentFailedError, type App, type ChatRequest, ExecutionStatus, hasCause } from "@agboss/core";
import { describe, expect, test as plainTest } from "vitest";
import {
  callTool,
  ModelScript,
  ModelScriptExhaustedError,
  replyWith,
  TestSetupError,
  testWith,
  UnscriptedModelError,
} from "../src/index.js";
import {
  LookupOrderTool,
  SupportAgent,
  SupportApplication,
  SupportWorkflowStart,
} from "./fixtures/support-app.js";

const test = testWith(SupportApplication);

const ask = (app: App, text = "Where is o1?") =>
  app.execute(SupportWorkflowStart, { text }, { ownerId: "customer-1" });

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("mockLlm", () => {
  test("[TK-04] mockLlm(Agent).thenReturn(callTool(Tool, args), replyWith(text)) scripts the agent's turns", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const lookup = mockOf(LookupOrderTool);
    const script = mockLlm(SupportAgent).thenReturn(
      callTool(LookupOrderTool, { orderId: "o1" }),
      replyWith("Order o1 has shipped."),
    );

    const result = await ask(app);

    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Order o1 has shipped." });
    expect(lookup.run).toHaveBeenCalledTimes(1);
    expect(lookup.run).toHaveBeenCalledWith({ orderId: "o1" });
    expect(script.calls.map((c) => c.caller)).toEqual(["agent:support-agent", "agent:support-agent"]);
    expect(script.calls[0]?.messages.at(-1)).toEqual({ role: "user", content: "Where is o1?" });
    expect(script.calls[1]?.messages.at(-1)).toMatchObject({
      role: "tool",
      name: "lookup-order-tool",
      content: expect.stringContaining("shipped"),
    });
    expect(script.remaining).toBe(0);
  });

  test("[TK-04] an agent whose model the test did not script fails, naming it and what to add", async ({
    app,
  }) => {
    const error = await failureOf(ask(app));

    expect(error).toBeInstanceOf(AgentFailedError);
    expect(hasCause(error, UnscriptedModelError)).toBe(true);
    expect(error.message).toContain('SupportAgent ("support-agent") called its model');
    expect(error.message).toContain("mockLlm(SupportAgent).thenReturn(");
  });

  test("[TK-04] a script that runs out fails, naming the agent and how many turns were scripted", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(SupportAgent).thenReturn(callTool(LookupOrderTool, { orderId: "o1" }));

    const error = await failureOf(ask(app));

    expect(error).toBeInstanceOf(AgentFailedError);
    expect(hasCause(error, ModelScriptExhaustedError)).toBe(true);
    expect(error.message).toContain('SupportAgent ("support-agent") asked its model for turn 2');
    expect(error.message).toContain("mockLlm(SupportAgent) scripted only 1 turn.");
  });

  test("[TK-04] mockLlm returns the same script for the same component, so turns can be added later", ({
    mockLlm,
  }) => {
    const first = mockLlm(SupportAgent).thenReturn(replyWith("one"));
    expect(mockLlm(SupportAgent)).toBe(first);
    mockLlm(SupportAgent).thenReturn(replyWith("two"));
    expect(first.remaining).toBe(2);
  });

  test("mockLlm of a component that calls no model is a setup error that points to mockOf", ({ mockLlm }) => {
    expect(() => mockLlm(LookupOrderTool)).toThrow(TestSetupError);
    expect(() => mockLlm(LookupOrderTool)).toThrow(
      /LookupOrderTool \("lookup-order-tool"\) is a tool.*mockOf\(LookupOrderTool\)/,
    );
    class Plain {}
    expect(() => mockLlm(Plain)).toThrow(/not an AGBoss component/);
  });
});

describe("ModelScript", () => {
  const request = (content: string): ChatRequest => ({
    model: "test/model",
    caller: "reply-interpreter:refund-reply-interpreter",
    tools: [],
    messages: [{ role: "user", content }],
  });
  const interpreterInput = (reply: string) => `### ask\nRefund o1?\n\n### reply\n${reply}\n`;

  plainTest(
    "when({ reply }) answers requests whose ### reply section matches, before the default turns",
    async () => {
      const script = new ModelScript(SupportAgent)
        .thenReturn(replyWith("default"))
        .when({ reply: "ok, but only half" })
        .thenReturn(replyWith("half"))
        .when({ reply: /^no\b/ })
        .thenReturn(replyWith("rejected"));

      expect((await script.invoke(request(interpreterInput("no, keep it")))).content).toBe("rejected");
      expect((await script.invoke(request(interpreterInput("  ok, but only half ")))).content).toBe("half");
      expect((await script.invoke(request(interpreterInput("ok, but only half")))).content).toBe("default");
      await expect(script.invoke(request(interpreterInput("ok, but only half")))).rejects.toThrow(
        /scripted only 1 turn and none of its 2 \.when\(…\) cases matched with turns left/,
      );
      expect(script.calls).toHaveLength(4);
    },
  );

  plainTest("when(predicate) and function turns read the request", async () => {
    const script = new ModelScript(SupportAgent)
      .when((r) => r.caller.startsWith("agent:"))
      .thenReturn((r) => replyWith(`echo: ${r.messages.at(-1)?.content}`));
    const response = await script.invoke({ ...request("hello"), caller: "agent:support-agent" });
    expect(response.content).toBe("echo: hello");
    await expect(script.invoke(request("hello"))).rejects.toBeInstanceOf(ModelScriptExhaustedError);
  });

  plainTest("a turn played twice gets fresh tool-call ids", async () => {
    const turn = callTool(LookupOrderTool, { orderId: "o1" });
    const script = new ModelScript(SupportAgent).thenReturn(turn, turn);
    const first = await script.invoke(request("a"));
    const second = await script.invoke(request("b"));
    expect(first.toolCalls[0]?.id).not.toBe(second.toolCalls[0]?.id);
    expect(second.toolCalls[0]).toMatchObject({ name: "lookup-order-tool", arguments: { orderId: "o1" } });
  });
});
