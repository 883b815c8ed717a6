// What the window saves for the user: calls of the Live log as JSON Lines or CSV, a server's
// stderr as text. Pure functions; the save dialog and the write are the backend's.
import type { Event, StderrLine } from "./types";

/** The columns of a calls export, in order (every field of a call). */
export const CALL_COLUMNS = [
  "time",
  "client",
  "kind",
  "tool",
  "server",
  "upstream_tool",
  "outcome",
  "message",
  "duration_ms",
  "bytes_in",
  "bytes_out",
  "bytes_kept",
  "rows",
  "batches",
  "first_item",
  "file",
  "format",
  "stored",
  "pid",
] as const;

/** One JSON object a line, oldest first as the audit log has them. */
export function callsJsonl(events: Event[]): string {
  return events.map((e) => JSON.stringify(pick(e))).join("\n") + (events.length ? "\n" : "");
}

/** RFC 4180 CSV with a header. A text cell a spreadsheet would run as a formula (=, +, -, @ and
 * the like) is kept as text with a leading apostrophe. */
export function callsCsv(events: Event[]): string {
  const lines = [CALL_COLUMNS.join(",")];
  for (const e of events) lines.push(CALL_COLUMNS.map((c) => csvCell(e[c])).join(","));
  return lines.join("\r\n") + "\r\n";
}

/** The stderr lines as `time  text`, one a line. */
export function stderrText(lines: StderrLine[]): string {
  return lines.map((l) => `${l.time}  ${l.text}`).join("\n") + (lines.length ? "\n" : "");
}

function pick(e: Event): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of CALL_COLUMNS) if (e[c] != null) out[c] = e[c];
  return out;
}

function csvCell(value: unknown): string {
  if (value == null) return "";
  if (typeof value === "number") return String(value);
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
