import { expectTypeOf, test } from "vitest";
import type { MockedInstance } from "../src/index.js";
import type { InboxNotifier, OrderBook } from "./fixtures/support-app.js";

// Checked by tsc in vitest's typecheck mode: an unused @ts-expect-error fails its test.

test("mockOf is typed by the class: each method keeps its signature and gains the spy API", () => {
  const book = {} as MockedInstance<OrderBook>;
  expectTypeOf(book.status).parameters.toEqualTypeOf<[orderId: string]>();
  expectTypeOf(book.status).returns.toEqualTypeOf<string>();
  book.status.mockReturnValue("fine");
  // @ts-expect-error status returns a string
  book.status.mockReturnValue(42);
  const notifier = {} as MockedInstance<InboxNotifier>;
  notifier.notify.mockResolvedValue(undefined);
  // @ts-expect-error notify resolves to nothing
  notifier.notify.mockResolvedValue("sent");
  expectTypeOf(notifier.sent).toEqualTypeOf<string[]>();
});
