import { describe, expect, it } from "vitest";
import { CALL_COLUMNS, callsCsv, callsJsonl, stderrText } from "./export";
import * as f from "./fixtures";

describe("exports", () => {
  const calls = [
    f.event({ pid: 7, client: "claude/1.0", message: null }),
    f.event({ pid: 8, outcome: "upstream_error", message: 'said "no", twice\nthen =HYPERLINK("x")', server: "=cmd|' /C calc'!A0" }),
  ];

  it("writes calls as JSON Lines that read back to the same calls", () => {
    const text = callsJsonl(calls);
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const back = lines.map((l) => JSON.parse(l));
    expect(back[1].message).toBe(calls[1].message);
    expect(back[0].pid).toBe(7);
    expect("message" in back[0]).toBe(false);
    expect(callsJsonl([])).toBe("");
  });

  it("writes calls as CSV: a header, quoted cells, formulas kept as text", () => {
    const text = callsCsv(calls);
    expect(text.startsWith(CALL_COLUMNS.join(",") + "\r\n")).toBe(true);
    const rows = text.split("\r\n");
    // The message's quotes are doubled and its line break stays inside the quoted cell.
    expect(text).toContain('"said ""no"", twice\nthen =HYPERLINK(""x"")"');
    // A cell that a spreadsheet would run starts with an apostrophe.
    expect(text).toContain("'=cmd|' /C calc'!A0");
    expect(rows[1].split(",")[CALL_COLUMNS.indexOf("pid")]).toBe("7");
    expect(callsCsv([])).toBe(CALL_COLUMNS.join(",") + "\r\n");
  });

  it("writes stderr with each line's time", () => {
    expect(stderrText([{ time: "2026-11-24T10:00:00Z", text: "boom" }])).toBe("2026-11-24T10:00:00Z  boom\n");
  });
});
