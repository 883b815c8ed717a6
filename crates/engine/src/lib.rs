//! Offload's engine: everything that is not a window.
//!
//! It owns the configuration, the allowed roots and the path guard, the pool of upstream MCP
//! servers, and the MCP server surface that clients talk to. It must never depend on a GUI
//! toolkit: the desktop app and the `offload` command are thin shells over this crate.
//!
//! # Floors
//!
//! The modules stand on floors, bottom to top. A module imports from its own floor and the
//! floors below, never from above, and no modules import each other in a circle
//! (`tests/floors.rs` reads these lines and every `crate::` path and holds both):
//!
//! 1. Words and values: `error`, `budget`, `crypto`, `logging`, `rounds`, `sessions`, `whole_file`
//! 2. State on disk: `shared_file`, `events`, `config`
//! 3. Kept and shared: `keychain`, `objects`, `shared_doc`, `shared_audit`, `replicas`, `traces`
//!    (the system's stores, buckets, what replicas share, traces sent out)
//! 4. Who may do what: `access`, `gateway` (tokens and scopes; exposure, names, pins)
//! 5. Other programs: `oauth`, `upstream`, `urls`, `scripts`, `clients`, `sentences` (the
//!    servers, web pages, script workers, MCP clients' files and the model Offload deals with)
//! 6. Files: `roots`, `store`, `refs`, `columns`, `file_args`
//! 7. The engine: `engine`
//! 8. Serving: `available`, `query`, `activity`, `config_watch`, `server`
//! 9. Doors for the shells: `http`, `ipc`, `control`
//!
//! Below every floor, in crates of their own: file formats (`offload-formats`: reading,
//! parsing into arguments, rendering) and queries (`offload-query`: DataFusion, jaq).
//!
//! A module is public only when a shell (the `offload` command, the app, the benches) needs it;
//! what they name of the others is re-exported from those (`control` for the app's types).

pub mod access;
pub mod activity;
mod available;
mod budget;
mod clients;
mod columns;
pub mod config;
pub mod config_watch;
pub mod control;
mod crypto;
mod engine;
mod error;
mod events;
mod file_args;
mod gateway;
pub mod http;
pub mod ipc;
pub mod keychain;
pub mod logging;
pub mod oauth;
mod objects;
mod query;
mod refs;
mod replicas;
mod roots;
mod rounds;
mod scripts;
mod sentences;
pub mod server;
mod sessions;
mod shared_audit;
mod shared_doc;
mod shared_file;
mod store;
mod traces;
mod upstream;
mod urls;
mod whole_file;

pub use engine::{Engine, EngineOptions, Reloaded};
pub use error::{ErrorCode, ToolError};
pub use store::{Destination as StoreDestination, Origin as StoreOrigin, StoreRequest};

/// What the fuzz targets (crates/fuzz) reach of the engine's private parts.
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    pub use crate::config::RootEntry;
    pub use crate::refs::resolve as resolve_refs;
    pub use crate::roots::Roots;
}
