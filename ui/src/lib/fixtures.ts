// Sample answers of the app's commands, for component tests.
import type {
  ActivitySeries,
  Event,
  Overview,
  Page,
  ResponseView,
  RootView,
  SchemaView,
  ServerView,
  Status,
  Summary,
} from "./types";

export const status = (over: Partial<Status> = {}): Status => ({
  paused: false,
  clients: 0,
  servers: { total: 1, ready: 1, errors: 0, signIn: 0, disabled: 0 },
  configError: null,
  notifications: false,
  ...over,
});

export const overview = (over: Partial<Overview> = {}): Overview => ({
  status: status(),
  clients: [],
  configPath: "/home/me/.config/offload/config.json",
  today: { calls: 12, errors: 1, bytesKept: 5 * 1024 * 1024, since: null },
  recorded: { calls: 40, errors: 2, bytesKept: 300 * 1024 * 1024, since: null },
  activity: activity(),
  ...over,
});

export const server = (over: Partial<ServerView> = {}): ServerView => ({
  name: "fx",
  spec: {
    transport: "stdio",
    command: "/usr/bin/fixture",
    args: ["--x"],
    env: {},
    cwd: null,
    url: "",
    headers: {},
    timeoutSecs: null,
    enabled: true,
    sandbox: null,
  },
  status: "ready",
  toolCount: 2,
  lastError: null,
  error: null,
  restarts: 0,
  uptimeSecs: 65,
  retryInSecs: null,
  disabledTools: [],
  enabledTools: null,
  stderr: "",
  secrets: [],
  plainSecrets: [],
  refused: [],
  refusedPaths: [],
  ...over,
});

export const root = (over: Partial<RootView> = {}): RootView => ({
  path: "/data",
  resolved: "/data",
  writable: true,
  default: true,
  configured: true,
  problem: null,
  files: 3,
  bytes: 2048,
  others: 0,
  retention: null,
  ...over,
});

export const response = (over: Partial<ResponseView> = {}): ResponseView => ({
  path: "/data/crm-contacts-20261121T100000Z-ab12.csv",
  name: "crm-contacts-20261121T100000Z-ab12.csv",
  root: "/data",
  server: "crm",
  tool: "contacts",
  description: "every contact",
  time: "2026-11-21T10:00:00Z",
  bytes: 2048,
  format: "csv",
  recorded: true,
  stored: true,
  beside: null,
  deletable: true,
  ...over,
});

export const summary = (over: Partial<Summary> = {}): Summary => ({
  path: "/data/x.csv",
  size: 2048,
  line_count: 3,
  line_count_exact: true,
  extension: "csv",
  content_type: "text/csv",
  encoding: "utf-8",
  head: "id,name\n1,Ada",
  tail: null,
  truncated: false,
  note: null,
  ...over,
});

export const schema = (over: Partial<SchemaView> = {}): SchemaView => ({
  format: "csv",
  facts: [["rows", "2"]],
  columns: [
    { name: "id", kind: "integer", nullable: false, samples: ["1", "2"] },
    { name: "name", kind: "string", nullable: true, samples: ["Ada"] },
  ],
  outline: null,
  note: null,
  ...over,
});

export const page = (over: Partial<Page> = {}): Page => ({
  kind: "table",
  text: null,
  columns: ["id", "name"],
  rows: [["1", "Ada"], ["2", "Grace"]],
  image: null,
  offset: 0,
  count: 2,
  total: 2,
  nextOffset: null,
  truncated: false,
  note: null,
  ...over,
});

let pid = 100;
export const event = (over: Partial<Event> = {}): Event => ({
  time: "2026-11-21T10:00:00Z",
  kind: "call",
  tool: "call_tool",
  client: "claude/1.0",
  server: "crm",
  upstream_tool: "contacts",
  file: null,
  format: null,
  bytes_in: 10,
  bytes_out: 2048,
  bytes_kept: 0,
  rows: null,
  batches: null,
  duration_ms: 12,
  outcome: "ok",
  pid: pid++,
  ...over,
});

/** A day of activity: 24 hourly buckets, calls in the last two hours. */
export const activity = (over: Partial<ActivitySeries> = {}): ActivitySeries => {
  const hour = 3600_000;
  const last = Math.floor(Date.now() / hour) * hour;
  const starts = Array.from({ length: 24 }, (_, i) => new Date(last - (23 - i) * hour).toISOString());
  const line = (at22: number, at23: number) => [...Array(22).fill(0), at22, at23];
  return {
    starts,
    total: { name: "all", calls: line(4, 6), errors: line(0, 1), bytesKept: line(0, 1_048_576) },
    byServer: [
      { name: "git", calls: line(3, 5), errors: line(0, 1), bytesKept: line(0, 1_048_576) },
      { name: "Offload", calls: line(1, 1), errors: line(0, 0), bytesKept: line(0, 0) },
    ],
    byClient: [{ name: "claude-code", calls: line(4, 6), errors: line(0, 1), bytesKept: line(0, 1_048_576) }],
    slowest: [
      { time: starts[23], what: "git/git_log", client: "claude-code", durationMs: 12_400, outcome: "ok" },
      { time: starts[22], what: "read_file", client: "claude-code", durationMs: 850, outcome: "path_not_found" },
    ],
    ...over,
  };
};
