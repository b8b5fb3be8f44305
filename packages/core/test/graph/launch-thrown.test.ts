import { describe, expect, test } from "vitest";
import { keepThrown, keptThrown, MAX_THROWN_KEPT } from "../../src/graph/launch-nodes.js";

describe("the errors a process keeps for parallel launches' joins", () => {
  test("past the bound the oldest is dropped, one at a time, and the others stay", () => {
    const first = new Error("branch 0 failed");
    keepThrown("kept-test/e/launch/0", first);
    expect(keptThrown("kept-test/e/launch/0")).toBe(first);
    for (let i = 1; i <= MAX_THROWN_KEPT; i++)
      keepThrown(`kept-test/e/launch/${i}`, new Error(`branch ${i}`));
    expect(keptThrown("kept-test/e/launch/0")).toBeUndefined();
    expect((keptThrown("kept-test/e/launch/1") as Error).message).toBe("branch 1");
    keepThrown("kept-test/e/launch/next", new Error("next"));
    expect(keptThrown("kept-test/e/launch/1")).toBeUndefined();
    expect((keptThrown("kept-test/e/launch/2") as Error).message).toBe("branch 2");
    expect((keptThrown(`kept-test/e/launch/${MAX_THROWN_KEPT}`) as Error).message).toBe(
      `branch ${MAX_THROWN_KEPT}`,
    );
  });
});
