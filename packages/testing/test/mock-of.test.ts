import type { App } from "@agboss/core";
import { describe, expect } from "vitest";
import { callTool, type ModelScript, replyWith, testWith } from "../src/index.js";
import {
  InboxNotifier,
  LookupOrderTool,
  Notifier,
  OrderBook,
  SupportAgent,
  SupportApplication,
  SupportWorkflowStart,
} from "./fixtures/support-app.js";

const test = testWith(SupportApplication);

const lookUp = (app: App) =>
  app.execute(SupportWorkflowStart, { text: "Where is o1?" }, { ownerId: "customer-1" });
const scriptLookup = (script: ModelScript) =>
  script.thenReturn(callTool(LookupOrderTool, { orderId: "o1" }), replyWith("done"));

describe("mockOf", () => {
  test("a provider's method is the container's instance's, spied: it passes through until scripted", async ({
    app,
    mockOf,
  }) => {
    const book = mockOf(OrderBook);
    expect(book).toBe(app.get(OrderBook));
    expect(book.status("o1")).toBe("shipped");
    book.status.mockReturnValue("delayed");
    expect(book.status("o1")).toBe("delayed");
    expect(book.status).toHaveBeenCalledTimes(2);
    expect(mockOf(OrderBook)).toBe(book);
  });

  test("a scripted provider method is what the running tool calls, and it records the calls", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    mockOf(OrderBook).status.mockReturnValue("delayed");
    const script = mockLlm(SupportAgent).thenReturn(
      callTool(LookupOrderTool, { orderId: "o1" }),
      replyWith("done"),
    );

    await lookUp(app);

    expect(mockOf(OrderBook).status).toHaveBeenCalledExactlyOnceWith("o1");
    expect(script.calls[1]?.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringContaining("delayed"),
    });
  });

  test("a contract (an abstract class) resolving to a mocked implementation gets the mock", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const inbox = mockOf(InboxNotifier);
    inbox.notify.mockResolvedValue(undefined);
    expect(mockOf(Notifier)).toBe(inbox);
    expect(mockOf(Notifier).notify).toBe(inbox.notify);
    scriptLookup(mockLlm(SupportAgent));

    await lookUp(app);

    // LookupOrderTool depends on the Notifier contract: it called the mock, not the real method.
    expect(inbox.notify).toHaveBeenCalledExactlyOnceWith("looked up o1");
    expect(app.get(InboxNotifier).sent).toEqual([]);
  });

  test("inherited methods are spied too", ({ mockOf }) => {
    const inbox = mockOf(InboxNotifier);
    expect(inbox.describe()).toBe("a notifier");
    inbox.describe.mockReturnValue("a mock");
    expect(inbox.describe()).toBe("a mock");
  });

  test("the spies also serve the class's instance in an app opened with openApp()", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const notify = mockOf(InboxNotifier).notify;
    const other = await openApp();
    scriptLookup(mockLlm(SupportAgent));
    scriptLookup(mockLlm(SupportAgent));

    await lookUp(app);
    await lookUp(other);

    expect(notify).toHaveBeenCalledTimes(2);
    expect(notify.mock.contexts).toEqual([app.get(InboxNotifier), other.get(InboxNotifier)]);
    // Passing through, each app's own instance did the work.
    expect(other.get(InboxNotifier).sent).toEqual(["looked up o1"]);
  });
});

describe("mockOf with testWith({ providers })", () => {
  const withValue = testWith(SupportApplication, {
    providers: [
      { provide: OrderBook, useValue: { status: (orderId: string) => `${orderId}: from a value` } },
    ],
  });

  withValue("a provider given as a plain value has its own methods spied", ({ app, mockOf }) => {
    const book = mockOf(OrderBook);
    expect(book).toBe(app.get(OrderBook));
    expect(book.status("o1")).toBe("o1: from a value");
    book.status.mockReturnValue("scripted");
    expect(app.get(OrderBook).status("o1")).toBe("scripted");
    expect(book.status).toHaveBeenCalledTimes(2);
  });
});
