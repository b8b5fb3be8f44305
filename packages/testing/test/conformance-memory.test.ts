import { MemoryStore, type Store } from "@agboss/core";
import { describeStoreConformance } from "@agboss/testing";

describeStoreConformance({
  name: "memory",
  createStore: async () => new MemoryStore(),
  destroyStore: (store) => store.close(),
  // A memory store's data is the instance itself: a peer is a second handle on it.
  createPeer: async (store) => Object.assign(Object.create(store) as Store, { close: async () => {} }),
  skip: [
    {
      reason: "the memory store has no transactions: each write lands at once, and nothing rolls back",
      tests: ["atomically: a unit that throws writes nothing"],
    },
  ],
});
