// Generated from the #[tauri::command] functions in src-tauri/src/commands by
// src-tauri/src/commands/declared.rs. Do not edit by hand: run
// `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`.
import type { BucketForm, CallView, ClientChange, ClientView, CreatedToken, Event, FileInfo, ImportReport, LogLine, NewSecret, OffersView, Overview, Page, QueryView, Responses, Retention, RootView, SchemaView, ServerSpec, ServerView, SharingView, Snippet, Span, Status, StderrLine, Summary, Swept, ToolView, ToolsView, Trial, UrlsView } from "./types";

/** Every command the app answers: its arguments, as the window sends them, and its answer. */
export interface Commands {
  clients: { args: Record<string, never>; answer: ClientView[] };
  connect_client: { args: { id: string; expose?: string | null }; answer: ClientChange };
  client_snippet: { args: { id: string; expose?: string | null }; answer: Snippet };
  disconnect_client: { args: { id: string }; answer: ClientChange };
  import_client_servers: { args: { id: string; removeFromClient: boolean }; answer: ImportReport };
  call_log: { args: { limit: number }; answer: Event[] };
  save_text: { args: { path: string; contents: string }; answer: null };
  overview: { args: { span?: Span | null }; answer: Overview };
  status: { args: Record<string, never>; answer: Status };
  set_paused: { args: { paused: boolean }; answer: Status };
  responses: { args: Record<string, never>; answer: Responses };
  response_call: { args: { path: string }; answer: CallView };
  delete_response: { args: { path: string }; answer: null };
  file_info: { args: { path: string }; answer: FileInfo };
  file_summary: { args: { path: string }; answer: Summary };
  file_schema: { args: { path: string }; answer: SchemaView };
  file_content: { args: { path: string; offset: number; length: number }; answer: Page };
  file_query: { args: { path: string; sql: string; limit: number }; answer: QueryView };
  save_query: { args: { path: string; sql: string }; answer: string };
  reveal: { args: { path: string }; answer: null };
  roots: { args: Record<string, never>; answer: RootView[] };
  add_bucket_root: { args: { form: BucketForm }; answer: null };
  add_root: { args: { path: string; writable: boolean }; answer: null };
  remove_root: { args: { path: string }; answer: null };
  set_default_root: { args: { path: string }; answer: null };
  set_root_writable: { args: { path: string; writable: boolean }; answer: null };
  set_root_retention: { args: { path: string; retention?: Retention | null }; answer: Swept[] };
  retention_preview: { args: { path: string; retention: Retention }; answer: Swept };
  urls: { args: Record<string, never>; answer: UrlsView };
  allow_url: { args: { pattern: string }; answer: null };
  remove_url: { args: { pattern: string }; answer: null };
  servers: { args: Record<string, never>; answer: ServerView[] };
  server_tools: { args: { name: string }; answer: ToolView[] };
  server_offers: { args: { name: string }; answer: OffersView };
  server_log: { args: { name: string }; answer: LogLine[] };
  server_stderr: { args: { name: string }; answer: StderrLine[] };
  test_server: { args: { name: string; spec: ServerSpec; secrets?: NewSecret[] | null }; answer: Trial };
  put_server: { args: { previous?: string | null; name: string; spec: ServerSpec; secrets?: NewSecret[] | null }; answer: null };
  allow_host: { args: { name: string; host: string; port: number }; answer: null };
  allow_path: { args: { name: string; path: string; write: boolean }; answer: null };
  move_secrets_to_keychain: { args: { name: string }; answer: number };
  tools_view: { args: Record<string, never>; answer: ToolsView };
  approve_tool: { args: { server: string; tool?: string | null }; answer: number };
  set_tool_enabled: { args: { server: string; tool: string; enabled: boolean }; answer: null };
  stop_retrying: { args: { name: string }; answer: null };
  remove_server: { args: { name: string }; answer: null };
  set_server_enabled: { args: { name: string; enabled: boolean }; answer: null };
  restart_server: { args: { name: string }; answer: number };
  sign_in_server: { args: { name: string }; answer: string };
  sign_out_server: { args: { name: string }; answer: null };
  autostart: { args: Record<string, never>; answer: boolean };
  set_autostart: { args: { enabled: boolean }; answer: boolean };
  set_notifications: { args: { enabled: boolean }; answer: null };
  sharing: { args: Record<string, never>; answer: SharingView };
  set_http_listen: { args: { listen?: string | null }; answer: SharingView };
  create_token: { args: { name: string; scopes: string[] }; answer: CreatedToken };
  revoke_token: { args: { name: string }; answer: null };
}
