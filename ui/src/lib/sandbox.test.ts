import { describe, expect, it } from "vitest";
import { closedNetwork, confinementOf, fieldsOf, sandboxOf } from "./sandbox";
import * as f from "./fixtures";

describe("sandbox", () => {
  it("reads an entry into the editor's fields and writes it back, keeping what it does not show", () => {
    const entry = { network: { allow: ["api.github.com", "localhost:8080"] }, read: ["~/notes"], env: ["GITHUB_TOKEN"], memory_mb: 512 };
    const fields = fieldsOf(entry);
    expect(fields).toEqual({ confined: true, network: "allow", allow: "api.github.com\nlocalhost:8080", read: "~/notes", write: "" });
    expect(sandboxOf(fields, entry)).toEqual(entry);
    expect(sandboxOf({ ...fields, network: "off", read: "" }, entry)).toEqual({ env: ["GITHUB_TOKEN"], memory_mb: 512 });
    expect(sandboxOf({ ...fields, allow: "a.com, b.org\n\n" }, null)).toEqual({ network: { allow: ["a.com", "b.org"] }, read: ["~/notes"] });
    expect(sandboxOf({ ...fields, confined: false }, entry)).toBe("off");
  });

  it("leaves the defaults unwritten", () => {
    expect(fieldsOf(null)).toEqual({ confined: true, network: "off", allow: "", read: "", write: "" });
    expect(sandboxOf(fieldsOf(null), null)).toBeNull();
    expect(fieldsOf("off").confined).toBe(false);
  });

  it("says how a server is confined, and closes an open network", () => {
    const spec = f.server().spec;
    expect(confinementOf(spec)?.text).toMatch(/no network$/);
    expect(confinementOf({ ...spec, sandbox: "off" })).toMatchObject({ unconfined: true, open: true });
    const open = { ...spec, sandbox: { network: "all" as const, read: ["~/x"] } };
    expect(confinementOf(open)).toMatchObject({ open: true, text: expect.stringMatching(/network open$/) });
    expect(closedNetwork(open).sandbox).toEqual({ read: ["~/x"] });
    expect(closedNetwork({ ...spec, sandbox: { network: "all" } }).sandbox).toBeNull();
    expect(confinementOf({ ...spec, sandbox: { network: { allow: ["a.com"] } } })?.text).toMatch(/network: a.com$/);
    expect(confinementOf({ ...spec, transport: "http" })).toBeNull();
  });
});
