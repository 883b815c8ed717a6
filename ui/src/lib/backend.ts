// The only module that talks to Tauri: every command and event the window uses, typed with the
// declarations generated from the Rust types (types.ts).
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { open, save } from "@tauri-apps/plugin-dialog";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import type {
  BucketForm,
  UrlsView,
  CallView,
  ClientChange,
  ClientView,
  ControlError,
  Event,
  FileInfo,
  ImportReport,
  LogLine,
  Retention,
  StderrLine,
  Swept,
  Trial,
  NewSecret,
  OffersView,
  Overview,
  Page,
  QueryView,
  Responses,
  RootView,
  SchemaView,
  ServerSpec,
  ServerView,
  SharingView,
  CreatedToken,
  Snippet,
  Span,
  Status,
  Summary,
  ToolView,
  ToolsView,
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

/** A command's failure: the engine's `{code, message}`, or a message for anything else. */
export function errorOf(e: unknown): ControlError {
  if (e && typeof e === "object" && "message" in e) {
    const { code, message } = e as Partial<ControlError>;
    return { code: code ?? "internal", message: String(message) };
  }
  return { code: "internal", message: String(e) };
}

export const backend = {
  overview: (span: Span = "day") => invoke<Overview>("overview", { span }),
  status: () => invoke<Status>("status"),
  setPaused: (paused: boolean) => invoke<Status>("set_paused", { paused }),

  servers: () => invoke<ServerView[]>("servers"),
  serverTools: (name: string) => invoke<ToolView[]>("server_tools", { name }),
  serverOffers: (name: string) => invoke<OffersView>("server_offers", { name }),
  serverLog: (name: string) => invoke<LogLine[]>("server_log", { name }),
  serverStderr: (name: string) => invoke<StderrLine[]>("server_stderr", { name }),
  testServer: (name: string, spec: ServerSpec, secrets: NewSecret[] = []) =>
    invoke<Trial>("test_server", { name, spec, secrets }),
  putServer: (previous: string | null, name: string, spec: ServerSpec, secrets: NewSecret[] = []) =>
    invoke<void>("put_server", { previous, name, spec, secrets }),
  moveSecretsToKeychain: (name: string) => invoke<number>("move_secrets_to_keychain", { name }),
  removeServer: (name: string) => invoke<void>("remove_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) =>
    invoke<void>("set_server_enabled", { name, enabled }),
  restartServer: (name: string) => invoke<number>("restart_server", { name }),
  stopRetrying: (name: string) => invoke<void>("stop_retrying", { name }),
  signIn: (name: string) => invoke<string>("sign_in_server", { name }),
  signOut: (name: string) => invoke<void>("sign_out_server", { name }),
  toolsView: () => invoke<ToolsView>("tools_view"),
  approveTool: (server: string, tool: string | null) => invoke<number>("approve_tool", { server, tool }),
  setToolEnabled: (server: string, tool: string, enabled: boolean) =>
    invoke<void>("set_tool_enabled", { server, tool, enabled }),

  roots: () => invoke<RootView[]>("roots"),
  addRoot: (path: string, writable: boolean) => invoke<void>("add_root", { path, writable }),
  addBucketRoot: (form: BucketForm) => invoke<void>("add_bucket_root", { form }),
  urls: () => invoke<UrlsView>("urls"),
  allowUrl: (pattern: string) => invoke<void>("allow_url", { pattern }),
  removeUrl: (pattern: string) => invoke<void>("remove_url", { pattern }),
  removeRoot: (path: string) => invoke<void>("remove_root", { path }),
  setDefaultRoot: (path: string) => invoke<void>("set_default_root", { path }),
  setRootWritable: (path: string, writable: boolean) =>
    invoke<void>("set_root_writable", { path, writable }),
  setRootRetention: (path: string, retention: Retention | null) =>
    invoke<Swept[]>("set_root_retention", { path, retention }),
  retentionPreview: (path: string, retention: Retention) =>
    invoke<Swept>("retention_preview", { path, retention }),

  responses: () => invoke<Responses>("responses"),
  responseCall: (path: string) => invoke<CallView>("response_call", { path }),
  deleteResponse: (path: string) => invoke<void>("delete_response", { path }),
  reveal: (path: string) => invoke<void>("reveal", { path }),
  fileInfo: (path: string) => invoke<FileInfo>("file_info", { path }),
  fileSummary: (path: string) => invoke<Summary>("file_summary", { path }),
  fileSchema: (path: string) => invoke<SchemaView>("file_schema", { path }),
  fileContent: (path: string, offset: number, length: number) =>
    invoke<Page>("file_content", { path, offset, length }),
  fileQuery: (path: string, sql: string, limit: number) =>
    invoke<QueryView>("file_query", { path, sql, limit }),
  saveQuery: (path: string, sql: string) => invoke<string>("save_query", { path, sql }),

  callLog: (limit: number) => invoke<Event[]>("call_log", { limit }),
  /** Writes `contents` to `path` (a file the user chose in the save dialog), whole or not at all. */
  saveText: (path: string, contents: string) => invoke<void>("save_text", { path, contents }),

  clients: () => invoke<ClientView[]>("clients"),
  connectClient: (id: string, expose: string | null = null) => invoke<ClientChange>("connect_client", { id, expose }),
  clientSnippet: (id: string, expose: string | null = null) => invoke<Snippet>("client_snippet", { id, expose }),

  sharing: () => invoke<SharingView>("sharing"),
  setHttpListen: (listen: string | null) => invoke<SharingView>("set_http_listen", { listen }),
  createToken: (name: string, scopes: string[]) => invoke<CreatedToken>("create_token", { name, scopes }),
  revokeToken: (name: string) => invoke<void>("revoke_token", { name }),
  disconnectClient: (id: string) => invoke<ClientChange>("disconnect_client", { id }),
  importClientServers: (id: string, removeFromClient: boolean) =>
    invoke<ImportReport>("import_client_servers", { id, removeFromClient }),

  autostart: () => invoke<boolean>("autostart"),
  setAutostart: (enabled: boolean) => invoke<boolean>("set_autostart", { enabled }),
  setNotifications: (enabled: boolean) => invoke<void>("set_notifications", { enabled }),

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
