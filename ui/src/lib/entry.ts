// A server entry pasted from a README or another client's config, read into the editor's
// fields: `{"mcpServers": {"name": {...}}}` (or VS Code's `servers`), a `"name": {...}`
// fragment, or the entry alone.

export interface PastedEntry {
  name: string | null;
  transport: "stdio" | "http";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | null;
  url: string;
  headers: Record<string, string>;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function strings(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new Error(`"${what}" is not an object of names and values`);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
}

/** The entry in `text`, or an error that says what is wrong with it. */
export function parseEntry(text: string): PastedEntry {
  const trimmed = text.trim().replace(/,\s*$/, "");
  if (!trimmed) throw new Error("Paste a server entry first.");
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    try {
      // A `"name": {...}` fragment, as READMEs show inside "mcpServers".
      value = JSON.parse(`{${trimmed}}`);
    } catch (e) {
      throw new Error(`This is not JSON: ${(e as Error).message}`);
    }
  }
  if (!isObject(value)) throw new Error("The entry must be a JSON object.");
  let name: string | null = null;
  let entry: Json = value;
  const wrapped = value.mcpServers ?? value.servers;
  if (isObject(wrapped)) {
    const first = Object.entries(wrapped)[0];
    if (!first || !isObject(first[1])) throw new Error("It names no server.");
    [name, entry] = [first[0], first[1]];
  } else if (!("command" in value) && !("url" in value) && !("serverUrl" in value) && !("httpUrl" in value)) {
    const only = Object.entries(value);
    if (only.length === 1 && isObject(only[0][1])) [name, entry] = [only[0][0], only[0][1]];
  }
  const url = entry.url ?? entry.serverUrl ?? entry.httpUrl;
  if (typeof entry.command !== "string" && typeof url !== "string") {
    throw new Error("The entry has neither a \"command\" (a stdio server) nor a \"url\" (a remote one).");
  }
  if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === "string"))) {
    throw new Error("\"args\" must be a list of strings.");
  }
  return {
    name,
    transport: typeof entry.command === "string" ? "stdio" : "http",
    command: typeof entry.command === "string" ? entry.command : "",
    args: (entry.args as string[] | undefined) ?? [],
    env: strings(entry.env, "env"),
    cwd: typeof entry.cwd === "string" ? entry.cwd : null,
    url: typeof url === "string" ? url : "",
    headers: strings(entry.headers, "headers"),
  };
}
