import { describe, expect, it } from "vitest";
import { Asked } from "./asked.svelte";

const later = <T>() => {
  let settle: { ok: (v: T) => void; fail: (e: unknown) => void } = { ok: () => {}, fail: () => {} };
  const promise = new Promise<T>((ok, fail) => (settle = { ok, fail }));
  return { promise, ...settle };
};
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Asked", () => {
  it("keeps what it shows about the same thing until the new answer, and blanks for another", async () => {
    const asked = new Asked<string>();
    asked.ask("a", () => Promise.resolve("a1"));
    await tick();
    expect(asked.value).toBe("a1");
    const a2 = later<string>();
    asked.ask("a", () => a2.promise);
    expect(asked.value).toBe("a1");
    a2.ok("a2");
    await tick();
    expect(asked.value).toBe("a2");
    asked.ask("b", () => new Promise(() => {}));
    expect(asked.value).toBeNull();
  });

  it("drops a late answer to an older question, and answers after clear", async () => {
    const asked = new Asked<string>();
    const old = later<string>();
    asked.ask("a", () => old.promise);
    asked.ask("a", () => Promise.resolve("new"));
    await tick();
    old.ok("old");
    await tick();
    expect(asked.value).toBe("new");

    const pending = later<string>();
    asked.ask("a", () => pending.promise);
    asked.clear();
    pending.ok("too late");
    await tick();
    expect(asked.value).toBeNull();
  });

  it("keeps the error of the latest question, and a later answer clears it", async () => {
    const asked = new Asked<string>();
    asked.ask("a", () => Promise.reject(new Error("the server exited")));
    await tick();
    expect(asked.error).toContain("the server exited");
    asked.ask("a", () => Promise.resolve("back"));
    await tick();
    expect([asked.value, asked.error]).toEqual(["back", null]);
  });
});
