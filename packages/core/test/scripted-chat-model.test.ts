import { describe, expect, test } from "vitest";
import { replyWith, ScriptExhaustedError, ScriptedChatModel } from "../src/index.js";

const ask = (n: number) => ({
  model: "scripted/x",
  messages: [{ role: "user" as const, content: `question ${n}` }],
  tools: [],
  caller: "agent:test-agent",
  signal: new AbortController().signal,
});

describe("ScriptedChatModel", () => {
  test("a finite script keeps every request and says clearly when it runs out", async () => {
    const model = new ScriptedChatModel([replyWith("one"), replyWith("two")]);
    expect((await model.invoke(ask(1))).content).toBe("one");
    expect((await model.invoke(ask(2))).content).toBe("two");
    await expect(model.invoke(ask(3))).rejects.toBeInstanceOf(ScriptExhaustedError);
    expect(model.requests.map((r) => r.messages[0]?.content)).toEqual([
      "question 1",
      "question 2",
      "question 3",
    ]);
  });

  test("a looping script keeps only its latest requests, so a long demo does not grow without bound", async () => {
    const model = new ScriptedChatModel([replyWith("a"), replyWith("b")], { loop: true, keep: 3 });
    const answers: string[] = [];
    for (let n = 1; n <= 250; n += 1) answers.push((await model.invoke(ask(n))).content);
    expect(answers.slice(0, 4)).toEqual(["a", "b", "a", "b"]);
    expect(model.requests.map((r) => r.messages[0]?.content)).toEqual([
      "question 248",
      "question 249",
      "question 250",
    ]);
    const byDefault = new ScriptedChatModel([replyWith("a")], { loop: true });
    for (let n = 1; n <= 150; n += 1) await byDefault.invoke(ask(n));
    expect(byDefault.requests).toHaveLength(100);
    expect(() => new ScriptedChatModel([], { keep: -1 })).toThrow(RangeError);
  });
});
