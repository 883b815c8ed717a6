// Sample answers of the app's commands, for component tests.
import type { Overview, RootView, ServerView, Status } from "./types";

export const status = (over: Partial<Status> = {}): Status => ({
  paused: false,
  clients: 0,
  servers: { total: 1, ready: 1, errors: 0, disabled: 0 },
  configError: null,
  ...over,
});

export const overview = (over: Partial<Overview> = {}): Overview => ({
  status: status(),
  clients: [],
  configPath: "/home/me/.config/offload/config.json",
  today: { calls: 12, errors: 1, bytesKept: 5 * 1024 * 1024, since: null },
  recorded: { calls: 40, errors: 2, bytesKept: 300 * 1024 * 1024, since: null },
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
  },
  status: "ready",
  toolCount: 2,
  lastError: null,
  stderr: "",
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
  ...over,
});
