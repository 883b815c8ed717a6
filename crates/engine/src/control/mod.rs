//! What the desktop app shows and changes, as plain functions over an [`Engine`](crate::Engine): the overview,
//! upstream servers and allowed directories. Every change is written to `config.json` (keeping
//! everything else in it) and put in effect at once, the same way a hand edit of the file is.
//!
//! This module holds the app's logic so that it is tested without a window; the Tauri commands
//! only convert arguments and call it. It must never depend on a GUI toolkit.

mod charts;
mod clients;
mod edit;
mod log;
mod notices;
mod offers;
mod overview;
mod preview;
mod responses;
mod retention;
mod roots;
mod secrets;
mod servers;
mod sharing;
mod sign_in;
mod spec;
#[cfg(test)]
mod tests;
mod tools;
mod urls;

pub use charts::{ActivitySeries, Series, SlowCall, Span, activity};
pub use clients::{
    ClientChange, ImportReport, Imported, Snippet, clients, connect, disconnect, import_servers,
    snippet,
};
pub use edit::ControlError;
pub use log::{audit_log, call_log};
pub use notices::{Look, Notice, Notices, notifications, set_notifications};
pub use offers::{OffersView, PromptView, ResourceView, server_log, server_offers};
/// A stored file's summary, as the Responses screen shows it.
pub use offload_formats::files::Summary;
#[cfg(feature = "ts")]
pub use overview::SessionTs;
pub use overview::{Activity, Overview, ServerCounts, Status, overview, status};
pub use preview::{
    ColumnView, FileInfo, Page, QueryView, SchemaView, content, file_info, query, save_query,
    schema, summary,
};
pub use responses::{
    CallView, ResponseView, Responses, delete_response, refresh_bucket_records, response_call,
    responses,
};
pub use retention::{SWEEP_EVERY, Swept, keep_tidy, preview as retention_preview, sweep, sweep_at};
pub use roots::{
    BucketForm, RootView, add_bucket_root, add_root, remove_root, roots, set_default_root,
    set_root_retention, set_root_writable,
};
pub use secrets::{NewSecret, Place, PlainSecret, SecretRef, secret_name};
pub use servers::{
    ServerView, ToolView, Trial, allow_host, allow_path, move_secrets_to_keychain, put_server,
    remove_server, restart_server, server_stderr, server_tools, servers, set_server_enabled,
    stop_retrying, test_server,
};
pub use sharing::{
    ClientEntry, CreatedToken, DEFAULT_LISTEN, SharingView, TokenView, client_entries,
    create_token, revoke_token, set_http_listen, sharing,
};
pub use sign_in::{ServerSignIn, sign_in, sign_ins, sign_out};
pub use spec::ServerSpec;
pub use tools::{
    ExposedView, ListingCost, ToolsView, approve_tool, held_count, set_tool_enabled, tools_view,
    tools_view_settled,
};
pub use urls::{UrlPatternView, UrlsView, allow_url, remove_url, urls};

// Types of the engine's own parts that the app's commands name.
pub use crate::clients::{ClientView, Machine, installed_program};
pub use crate::events::{Event, EventKind};
pub use crate::gateway::Held;
pub use crate::upstream::{LogLine, PathRefusal, Refusal, ServerState, StderrLine};
