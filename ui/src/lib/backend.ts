// The only module that talks to Tauri: every command and event the window uses, typed with the
// declarations generated from the Rust types (types.ts).
import { invoke } from "@tauri-apps/api/core";
import type { Commands } from "./commands";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { open, save } from "@tauri-apps/plugin-dialog";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import type {
  BucketForm,
  ControlError,
  Event,
  Retention,
  NewSecret,
  ServerSpec,
  Span,
  Status,
} from "./types";

/** The event the app emits whenever something the window shows changed. */
export const CHANGED = "offload://changed";
/** New calls, a batch at a time, from every Offload process. */
export const CALLS = "offload://calls";
/** Stored responses were added, changed or removed. */
export const RESPONSES = "offload://responses";

/** A synchronous disposer for a listener that is registered asynchronously: stopped at once if
 * it is already registered, or as soon as it is (a screen may close before that). */
function disposer(registering: Promise<UnlistenFn>): () => void {
  let stop: UnlistenFn | null = null;
  let done = false;
  // Unlistening late (the window is going away) may fail; nothing is left to clean up then.
  const quietly = (unlisten: UnlistenFn) => Promise.resolve().then(unlisten).catch(() => {});
  registering.then((unlisten) => {
    if (done) quietly(unlisten);
    else stop = unlisten;
  });
  return () => {
    done = true;
    if (stop) quietly(stop);
  };
}

/** Calls `handler` with each `name` event's payload until the returned function is called. */
function subscribe<T>(name: string, handler: (payload: T) => void): () => void {
  return disposer(listen<T>(name, (event) => handler(event.payload)));
}

/** The arguments a command takes: none, or its own. */
type Args<C extends keyof Commands> =
  Commands[C]["args"] extends Record<string, never> ? [] : [Commands[C]["args"]];

/** Calls a command of the app; its name, arguments and answer are those Rust declares (commands.ts). */
function command<C extends keyof Commands>(name: C, ...args: Args<C>): Promise<Commands[C]["answer"]> {
  return invoke<Commands[C]["answer"]>(name, args[0]);
}

/** A command's failure: the engine's `{code, message}`, or a message for anything else. */
export function errorOf(e: unknown): ControlError {
  if (e && typeof e === "object" && "message" in e) {
    const { code, message } = e as Partial<ControlError>;
    return { code: code ?? "internal", message: String(message) };
  }
  return { code: "internal", message: String(e) };
}

export const backend = {
  overview: (span: Span = "day") => command("overview", { span }),
  status: () => command("status"),
  setPaused: (paused: boolean) => command("set_paused", { paused }),

  servers: () => command("servers"),
  serverTools: (name: string) => command("server_tools", { name }),
  serverOffers: (name: string) => command("server_offers", { name }),
  serverLog: (name: string) => command("server_log", { name }),
  serverStderr: (name: string) => command("server_stderr", { name }),
  testServer: (name: string, spec: ServerSpec, secrets: NewSecret[] = []) =>
    command("test_server", { name, spec, secrets }),
  putServer: (previous: string | null, name: string, spec: ServerSpec, secrets: NewSecret[] = []) =>
    command("put_server", { previous, name, spec, secrets }),
  moveSecretsToKeychain: (name: string) => command("move_secrets_to_keychain", { name }),
  removeServer: (name: string) => command("remove_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) =>
    command("set_server_enabled", { name, enabled }),
  restartServer: (name: string) => command("restart_server", { name }),
  allowHost: (name: string, host: string, port: number) => command("allow_host", { name, host, port }),
  allowPath: (name: string, path: string, write: boolean) => command("allow_path", { name, path, write }),
  stopRetrying: (name: string) => command("stop_retrying", { name }),
  signIn: (name: string) => command("sign_in_server", { name }),
  signOut: (name: string) => command("sign_out_server", { name }),
  toolsView: () => command("tools_view"),
  approveTool: (server: string, tool: string | null) => command("approve_tool", { server, tool }),
  setToolEnabled: (server: string, tool: string, enabled: boolean) =>
    command("set_tool_enabled", { server, tool, enabled }),

  roots: () => command("roots"),
  addRoot: (path: string, writable: boolean) => command("add_root", { path, writable }),
  addBucketRoot: (form: BucketForm) => command("add_bucket_root", { form }),
  urls: () => command("urls"),
  allowUrl: (pattern: string) => command("allow_url", { pattern }),
  removeUrl: (pattern: string) => command("remove_url", { pattern }),
  removeRoot: (path: string) => command("remove_root", { path }),
  setDefaultRoot: (path: string) => command("set_default_root", { path }),
  setRootWritable: (path: string, writable: boolean) =>
    command("set_root_writable", { path, writable }),
  setRootRetention: (path: string, retention: Retention | null) =>
    command("set_root_retention", { path, retention }),
  retentionPreview: (path: string, retention: Retention) =>
    command("retention_preview", { path, retention }),

  responses: () => command("responses"),
  responseCall: (path: string) => command("response_call", { path }),
  deleteResponse: (path: string) => command("delete_response", { path }),
  reveal: (path: string) => command("reveal", { path }),
  fileInfo: (path: string) => command("file_info", { path }),
  fileSummary: (path: string) => command("file_summary", { path }),
  fileSchema: (path: string) => command("file_schema", { path }),
  fileContent: (path: string, offset: number, length: number) =>
    command("file_content", { path, offset, length }),
  fileQuery: (path: string, sql: string, limit: number) =>
    command("file_query", { path, sql, limit }),
  saveQuery: (path: string, sql: string) => command("save_query", { path, sql }),

  callLog: (limit: number) => command("call_log", { limit }),
  /** Writes `contents` to `path` (a file the user chose in the save dialog), whole or not at all. */
  saveText: (path: string, contents: string) => command("save_text", { path, contents }),

  clients: () => command("clients"),
  connectClient: (id: string, expose: string | null = null) => command("connect_client", { id, expose }),
  clientSnippet: (id: string, expose: string | null = null) => command("client_snippet", { id, expose }),

  sharing: () => command("sharing"),
  setHttpListen: (listen: string | null) => command("set_http_listen", { listen }),
  createToken: (name: string, scopes: string[]) => command("create_token", { name, scopes }),
  revokeToken: (name: string) => command("revoke_token", { name }),
  disconnectClient: (id: string) => command("disconnect_client", { id }),
  importClientServers: (id: string, removeFromClient: boolean) =>
    command("import_client_servers", { id, removeFromClient }),

  autostart: () => command("autostart"),
  setAutostart: (enabled: boolean) => command("set_autostart", { enabled }),
  setNotifications: (enabled: boolean) => command("set_notifications", { enabled }),

  /** The native folder picker; null when the user cancels. */
  pickFolder: async (): Promise<string | null> => {
    const chosen = await open({ directory: true, multiple: false, title: "Allow a folder" });
    return typeof chosen === "string" ? chosen : null;
  },

  /** The native save dialog; null when the user cancels. */
  pickSaveFile: async (name: string, kind: string, extension: string): Promise<string | null> => {
    const chosen = await save({ defaultPath: name, title: "Save", filters: [{ name: kind, extensions: [extension] }] });
    return typeof chosen === "string" ? chosen : null;
  },

  /** Calls `handler` on every change until the returned function is called. */
  onChanged: (handler: (status: Status) => void) => subscribe<Status>(CHANGED, handler),
  onCalls: (handler: (events: Event[]) => void) => subscribe<Event[]>(CALLS, handler),
  onResponses: (handler: () => void) => subscribe<null>(RESPONSES, handler),

  /** Calls `handler` with the paths of files dropped on the window. */
  onDrop: (handler: (paths: string[]) => void): (() => void) =>
    disposer(
      getCurrentWebview().onDragDropEvent((event) => {
        if (event.payload.type === "drop" && event.payload.paths.length) handler(event.payload.paths);
      }),
    ),
};
