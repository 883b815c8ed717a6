// Generated from the Rust types by src-tauri/src/types.rs. Do not edit by hand:
// run `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`.

export type Status = { paused: boolean, clients: number, servers: ServerCounts, 
/**
 * Why `config.json` is not in effect, when it does not parse.
 */
configError: string | null, 
/**
 * Desktop notifications on (`notifications` in `config.json`).
 */
notifications: boolean, };

export type ServingState = { 
/**
 * The address asked for (`http.listen`).
 */
listen: string | null, 
/**
 * The URL served at, while serving.
 */
url: string | null, 
/**
 * Why the address is not served.
 */
error: string | null, };

export type TokenView = { name: string, scopes: Array<string>, 
/**
 * RFC 3339.
 */
created: string, };

export type SharingView = { serving: ServingState, tokens: Array<TokenView>, 
/**
 * The OAuth issuer whose tokens are accepted too (`http.issuer`), if any.
 */
issuer: string | null, };

export type ClientEntry = { client: string, 
/**
 * Where it goes (a file, or a terminal).
 */
place: string, text: string, };

export type CreatedToken = { name: string, token: string, url: string, snippets: Array<ClientEntry>, };

export type ServerCounts = { total: number, ready: number, errors: number, 
/**
 * Servers waiting for the user to sign in.
 */
signIn: number, disabled: number, };

export type Overview = { status: Status, clients: Array<Session>, configPath: string | null, today: Activity, 
/**
 * Everything in the audit log (it keeps about 40 MB of history).
 */
recorded: Activity, 
/**
 * The chart's series over the span asked for, from the same reading of the audit log.
 */
activity: ActivitySeries, };

export type Session = { id: number, client: string, version: string, since: string, };

export type Activity = { calls: number, errors: number, 
/**
 * Bytes that reached a file or a tool instead of the model: the files stored answers went
 * to, and the files whose data went to tools.
 */
bytesKept: number, since: string | null, };

export type Span = "day" | "week";

export type Series = { name: string, calls: number[], errors: number[], bytesKept: number[], };

export type SlowCall = { time: string, 
/**
 * The upstream server and tool (`server/tool`), or Offload's own tool.
 */
what: string, client: string, durationMs: number, outcome: string, };

export type ActivitySeries = { 
/**
 * Where each bucket starts, oldest first; the last one holds now.
 */
starts: string[], total: Series, 
/**
 * The busiest servers first (Offload's own tools as "Offload"), the rest as "others".
 */
byServer: Array<Series>, 
/**
 * The busiest clients first (by name, without version), the rest as "others".
 */
byClient: Array<Series>, 
/**
 * The slowest calls of the span, slowest first.
 */
slowest: Array<SlowCall>, };

export type ServerSpec = { 
/**
 * `stdio` or `http`.
 */
transport: string, command: string, args: Array<string>, env: { [key in string]: string }, cwd: string | null, url: string, headers: { [key in string]: string }, timeoutSecs: number | null, enabled: boolean, 
/**
 * A stdio server's confinement: `"off"`, or what it may touch beyond the defaults
 * (absent: the defaults).
 */
sandbox: "off" | { network?: "off" | "all" | { allow: string[] }, read?: string[], write?: string[], env?: string[], memory_mb?: number, processes?: number, unix_sockets?: boolean } | null, };

export type ServerView = { name: string, spec: ServerSpec, status: "idle" | "starting" | "ready" | "error" | "sign_in_required" | "disabled", toolCount: number | null, lastError: string | null, 
/**
 * Why it is in error now (absent when it is not).
 */
error: string | null, 
/**
 * Starts after the first one: crashes recovered, retries, restarts.
 */
restarts: number, 
/**
 * Seconds since it became ready, while it is.
 */
uptimeSecs: number | null, 
/**
 * Seconds until Offload tries to start it again, while it is failing and retried.
 */
retryInSecs: number | null, 
/**
 * Tools the user turned off (`disabledTools`).
 */
disabledTools: Array<string>, 
/**
 * When set, only these tools are used (`enabledTools`).
 */
enabledTools: Array<string> | null, 
/**
 * The last lines the server wrote to stderr.
 */
stderr: string, 
/**
 * Values kept in the keychain.
 */
secrets: Array<SecretRef>, 
/**
 * Values that look secret and are written in the file: offered for moving to the keychain.
 */
plainSecrets: Array<PlainSecret>, 
/**
 * Hosts its network proxy refused that its entry still does not allow: offered for
 * allowing.
 */
refused: Array<Refusal>, 
/**
 * Paths it said it was refused (on stderr) that its entry does not grant since, leaving
 * out what no server gets by design: offered for allowing.
 */
refusedPaths: Array<PathRefusal>, };

export type Place = "env" | "header";

export type SecretRef = { place: Place, key: string, 
/**
 * The keychain entry (`${keyring:NAME}`).
 */
name: string, 
/**
 * Whether the keychain holds it.
 */
present: boolean, };

export type PlainSecret = { place: Place, key: string, };

export type NewSecret = { place: Place, key: string, value: string, };

export type ToolView = { name: string, description: string | null, };

export type PromptView = { name: string, 
/**
 * The name clients see it under (`<server>__<prompt>`, the prefix, or its own).
 */
exposed: string, description: string | null, 
/**
 * Its arguments, required ones marked with `*`.
 */
arguments: Array<string>, };

export type ResourceView = { 
/**
 * The URI, or the URI template of a template.
 */
uri: string, name: string, description: string | null, mimeType: string | null, template: boolean, };

export type OffersView = { prompts: Array<PromptView>, resources: Array<ResourceView>, 
/**
 * What failed, per kind (a server may offer one and fail the other).
 */
errors: Array<string>, };

export type LogLine = { 
/**
 * RFC 3339.
 */
time: string, 
/**
 * `debug` … `emergency`.
 */
level: string, logger: string | null, 
/**
 * The message's `data`: a string as it is, anything else as JSON.
 */
message: string, };

export type Refusal = { host: string, port: number, times: number, };

export type PathRefusal = { path: string, times: number, };

export type StderrLine = { time: string, text: string, };

export type Trial = { 
/**
 * The tools it listed, when it started and answered.
 */
tools: Array<string> | null, 
/**
 * Why not, when it did not.
 */
error: string | null, millis: number, 
/**
 * Its last stderr lines.
 */
stderr: string, };

export type ToolsView = { 
/**
 * `direct` or `meta`, as the configuration's `tools.expose` decides for a client that
 * does not choose.
 */
mode: string, 
/**
 * Why (for `auto`: the count against `directLimit`).
 */
why: string, 
/**
 * Upstream tools listed as tools of their own, with the name clients see.
 */
exposed: Array<ExposedView>, held: Array<Held>, 
/**
 * Tools that could not be listed under a name of their own, and why.
 */
skipped: Array<string>, 
/**
 * What the tool list costs a client in each mode.
 */
cost: ListingCost, };

export type ExposedView = { name: string, server: string, tool: string, };

export type ListingCost = { 
/**
 * Every upstream tool listed as its own (`direct`).
 */
directBytes: number, directTools: number, 
/**
 * Offload's tools only, upstream ones found by search (`meta`).
 */
metaBytes: number, metaTools: number, };

export type Held = { server: string, tool: string, 
/**
 * The approved definition; absent for a tool that is new on a pinned server.
 */
previous: unknown, current: unknown, };

export type RootView = { 
/**
 * As written in `config.json` (or the built-in default directory's path).
 */
path: string, 
/**
 * The directory it resolves to, when it is usable.
 */
resolved: string | null, writable: boolean, 
/**
 * Where stored responses go when no `storage_path` is given.
 */
default: boolean, 
/**
 * False for the built-in directory used while none is configured.
 */
configured: boolean, 
/**
 * Why the directory is not in use (missing, not a directory, ...).
 */
problem: string | null, 
/**
 * Files Offload stored inside it (responses and the files beside them), and their size:
 * what the Responses screen lists as stored for it.
 */
files: number, bytes: number, 
/**
 * Other files the Responses screen lists for it (inputs, files put there by hand).
 */
others: number, 
/**
 * Its retention rule, if the user set one (off by default).
 */
retention: Retention | null, };

export type Retention = { days?: number | null, maxGb?: number | null, };

export type Swept = { root: string, files: number, bytes: number, };

export type BucketForm = { 
/**
 * `s3://bucket/prefix` (or `gs://`, `az://`).
 */
url: string, 
/**
 * S3-compatible servers (MinIO, SeaweedFS, R2, ...), Azurite, a GCS emulator; empty for the
 * cloud itself.
 */
endpoint: string, 
/**
 * S3 only.
 */
region: string, 
/**
 * S3: the access key ID (saved to the keychain); Azure: the storage account's name;
 * GCS: unused. Empty: from the environment.
 */
accessKeyId: string, 
/**
 * S3: the secret access key; Azure: the account key; GCS: the service-account key (its
 * JSON). Saved to the keychain; empty: from the environment.
 */
secretAccessKey: string, writable: boolean, };

export type UrlsView = { allow: Array<UrlPatternView>, maxBytes: number, timeoutSecs: number, };

export type UrlPatternView = { pattern: string, 
/**
 * Why it is skipped, when it does not parse (a hand edit).
 */
problem: string | null, 
/**
 * True when its host has no `*`: that host may be on a private or loopback address.
 */
namesHost: boolean, };

export type ResponseView = { path: string, name: string, 
/**
 * The allowed directory that holds it.
 */
root: string, 
/**
 * The upstream server and tool, for recorded responses.
 */
server: string | null, tool: string | null, description: string | null, 
/**
 * When it was stored (recorded) or last modified (found).
 */
time: string, bytes: number, 
/**
 * The file's format (its extension for found files).
 */
format: string, 
/**
 * Whether the records index holds its call (the Call tab).
 */
recorded: boolean, 
/**
 * Whether Offload stored it (a response, or a file written beside one); false for other
 * files found in the directory (inputs, files the user put there).
 */
stored: boolean, 
/**
 * For a file written beside a response (an image, audio): that response's path.
 */
beside: string | null, 
/**
 * Whether it may be deleted (it is in a writable directory).
 */
deletable: boolean, };

export type Responses = { items: Array<ResponseView>, 
/**
 * True when the roots hold more files than are listed.
 */
truncated: boolean, };

export type CallView = { server: string, tool: string, arguments: unknown, description: string | null, time: string, durationMs: number, bytes: number, format: string, 
/**
 * Binary files written beside it (images, audio).
 */
files: Array<string>, 
/**
 * False for records rebuilt from files after the index was lost (no arguments).
 */
complete: boolean, };

export type FileInfo = { 
/**
 * Canonical.
 */
path: string, name: string, folder: string, bytes: number, 
/**
 * The allowed directory that holds it, if any.
 */
root: string | null, 
/**
 * A folder (dropped on the window): the window offers to allow it.
 */
directory: boolean, };

export type ColumnView = { name: string, 
/**
 * `integer`, `string`, ... (`a|b` when values differ); empty when unknown.
 */
kind: string, nullable: boolean, samples: Array<string>, };

export type SchemaView = { format: string, 
/**
 * Scalar facts (rows, delimiter, encoding, ...), as label and value.
 */
facts: Array<[string, string]>, 
/**
 * Columns of a table, keys of JSON/YAML records, elements of XML, first sheet's columns.
 */
columns: Array<ColumnView>, 
/**
 * The compact shape of structured data (`[{id: integer, ...}]`).
 */
outline: string | null, note: string | null, };

export type Page = { 
/**
 * `text`, `table`, `sheet`, `pdf` or `image`.
 */
kind: string, text: string | null, 
/**
 * Tables: the header and the rows of this page.
 */
columns: Array<string> | null, rows: Array<Array<string>> | null, 
/**
 * Images: a `data:` URL of the (possibly scaled) image.
 */
image: string | null, offset: number, count: number, total: number | null, nextOffset: number | null, truncated: boolean, note: string | null, };

export type QueryView = { 
/**
 * The result's columns and their types.
 */
columns: Array<[string, string]>, rows: Array<Array<string>>, 
/**
 * Rows in the whole result.
 */
rowCount: number, truncated: boolean, millis: number, };

export type Summary = { path: string, size: number, 
/**
 * Lines in the file (0 for binary files).
 */
line_count: number, 
/**
 * False when the count was estimated (very large files).
 */
line_count_exact: boolean, extension: string, content_type: string, 
/**
 * `utf-8`, `utf-16le (bom)`, `windows-1252`, ..., or `binary`.
 */
encoding: string, 
/**
 * The first `max_lines` lines, joined with newlines; long lines cut with a marker.
 */
head: string, 
/**
 * The last 5 lines, only when the file has more than `max_lines + 5` lines.
 */
tail: string | null, 
/**
 * Whether anything was left out (lines between head and tail, or cut lines).
 */
truncated: boolean, 
/**
 * For files that are not text: what they are and which tool reads them.
 */
note: string | null, };

export type EventKind = "tool" | "call" | "store" | "file_content" | "batch" | "batch_part" | "file_ref" | "direct" | "script";

export type Event = { time: string, kind: EventKind, 
/**
 * The Offload tool that was called.
 */
tool: string, 
/**
 * The client, as `name/version` from its handshake.
 */
client?: string | null, server?: string | null, upstream_tool?: string | null, file?: string | null, format?: string | null, bytes_in: number, bytes_out: number, 
/**
 * Bytes that went to a file or a tool instead of the model: the stored file of an answer
 * that was stored and linked, the file whose data a tool received.
 */
bytes_kept: number, rows?: number | null, 
/**
 * Batches of a run; for a `batch_part`, the batch's number (from 1).
 */
batches?: number | null, 
/**
 * For a `batch_part`: the 0-based index of its first item in the file.
 */
first_item?: number | null, duration_ms: number, 
/**
 * `ok`, or the error code (`upstream_tool_error` when the upstream answered isError).
 */
outcome: string, 
/**
 * What went wrong, in words (an error's message, cut to 300 bytes).
 */
message?: string | null, 
/**
 * The file the answer was stored in, when it was stored and linked.
 */
stored?: string | null, 
/**
 * The process that served it (to tell embedded shims from the app).
 */
pid: number, 
/**
 * The script run (`run_script`) this call was made by, or that was: the run's own event
 * and the calls its script made share it.
 */
script?: number | null, };

export type ClientView = { id: string, name: string, path: string, 
/**
 * The client seems installed (its file or its folder exists).
 */
present: boolean, 
/**
 * Offload is in its file.
 */
connected: boolean, 
/**
 * Its other server entries (what *Import* would copy).
 */
servers: Array<string>, 
/**
 * Why its file cannot be read (it is then never written).
 */
error: string | null, };

export type ClientChange = { 
/**
 * The copy of the file as it was (none when there was no file).
 */
backup: string | null, client: ClientView, };

export type Snippet = { text: string, command: string | null, };

export type Imported = { name: string, 
/**
 * `None` when imported; otherwise why not.
 */
skipped: string | null, };

export type ImportReport = { servers: Array<Imported>, 
/**
 * Set when the imported servers were removed from the client.
 */
backup: string | null, };

export type ControlError = { code: string, message: string, };
