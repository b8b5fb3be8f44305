import { describe, expect, test } from "vitest";
import { newPauseId } from "../../src/answering/pause-book.js";

describe("pause ids", () => {
  test("are 128 random bits as 22 URL-safe characters, none repeated across several batches of drawn bytes", () => {
    const ids = Array.from({ length: 1_000 }, () => newPauseId());
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(id, "base64url")).toHaveLength(16);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("use every bit: over many ids each of the 128 bit positions is set about half the time", () => {
    const count = 4_000;
    const ones = new Array<number>(128).fill(0);
    for (let n = 0; n < count; n += 1) {
      const bytes = Buffer.from(newPauseId(), "base64url");
      for (let bit = 0; bit < 128; bit += 1) {
        if ((bytes[bit >> 3] as number) & (0x80 >> (bit & 7))) ones[bit] = (ones[bit] as number) + 1;
      }
    }
    // Binomial(4000, 0.5): a position outside 40–60% is a bug, not chance (about 12 standard deviations).
    for (const set of ones) expect(set / count).toBeGreaterThan(0.4);
    for (const set of ones) expect(set / count).toBeLessThan(0.6);
  });
});
