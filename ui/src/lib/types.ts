// Generated from the Rust types by src-tauri/src/types.rs. Do not edit by hand:
// run `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`.

export type Status = { paused: boolean, clients: number, servers: ServerCounts, 
/**
 * Why `config.json` is not in effect, when it does not parse.
 */
configError: string | null, };

export type ServerCounts = { total: number, ready: number, errors: number, disabled: number, };

export type Overview = { status: Status, clients: Array<Session>, configPath: string | null, today: Activity, 
/**
 * Everything in the audit log (it keeps about 40 MB of history).
 */
recorded: Activity, };

export type Session = { id: number, client: string, version: string, since: string, };

export type Activity = { calls: number, errors: number, 
/**
 * Bytes that reached a file or a tool instead of the model: stored answers (less the
 * link and summary the model got) and file content passed to tools.
 */
bytesKept: number, since: string | null, };

export type ServerSpec = { 
/**
 * `stdio` or `http`.
 */
transport: string, command: string, args: Array<string>, env: { [key in string]: string }, cwd: string | null, url: string, headers: { [key in string]: string }, timeoutSecs: number | null, enabled: boolean, };

export type ServerView = { name: string, spec: ServerSpec, status: "idle" | "starting" | "ready" | "error" | "disabled", toolCount: number | null, lastError: string | null, 
/**
 * The last lines the server wrote to stderr.
 */
stderr: string, };

export type ToolView = { name: string, description: string | null, };

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
 * Stored responses inside it, and their size.
 */
files: number, bytes: number, };

export type ControlError = { code: string, message: string, };
