import { describe, expect, test } from "vitest";
import {
  MAX_REMEMBERED_BUDGETS,
  rememberExecutionBudget,
  rememberedExecutionBudget,
} from "../../src/services/budget-guard.js";
import type { RuntimeServices } from "../../src/services/runtime-services.js";

describe("the budgets an app remembers for its executions", () => {
  // Only the identity of the services matters here: it keys what each app remembers.
  const app = () => ({}) as RuntimeServices;

  test("past the bound the oldest is dropped, one at a time, and the others stay", () => {
    const services = app();
    const limits = { modelCalls: 3 };
    rememberExecutionBudget(services, "t", "e-0", limits);
    for (let i = 1; i <= MAX_REMEMBERED_BUDGETS; i++)
      rememberExecutionBudget(services, "t", `e-${i}`, undefined);
    expect(rememberedExecutionBudget(services, "t", "e-0")).toBeUndefined();
    expect(rememberedExecutionBudget(services, "t", "e-1")).toBeNull();
    expect(rememberedExecutionBudget(services, "t", `e-${MAX_REMEMBERED_BUDGETS}`)).toBeNull();
    rememberExecutionBudget(services, "t", "e-next", limits);
    expect(rememberedExecutionBudget(services, "t", "e-1")).toBeUndefined();
    expect(rememberedExecutionBudget(services, "t", "e-2")).toBeNull();
    expect(rememberedExecutionBudget(services, "t", "e-next")).toEqual(limits);
  });

  test("remembering an execution again makes it the newest: the bound drops the next oldest instead", () => {
    const services = app();
    for (let i = 0; i < MAX_REMEMBERED_BUDGETS; i++)
      rememberExecutionBudget(services, "t", `e-${i}`, undefined);
    rememberExecutionBudget(services, "t", "e-0", { modelCalls: 5 });
    rememberExecutionBudget(services, "t", "e-new", undefined);
    expect(rememberedExecutionBudget(services, "t", "e-0")).toEqual({ modelCalls: 5 });
    expect(rememberedExecutionBudget(services, "t", "e-1")).toBeUndefined();
    expect(rememberedExecutionBudget(services, "t", "e-new")).toBeNull();
  });

  test("each app remembers its own", () => {
    const one = app();
    const other = app();
    rememberExecutionBudget(one, "t", "e-1", { modelCalls: 1 });
    expect(rememberedExecutionBudget(one, "t", "e-1")).toEqual({ modelCalls: 1 });
    expect(rememberedExecutionBudget(other, "t", "e-1")).toBeUndefined();
  });
});
