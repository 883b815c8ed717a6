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
//! 1. Words and values: `error`, `clip`, `units`, `cells`, `crypto`, `formats`, `logging`,
//!    `rounds`, `sessions`, `special_files`, `whole_file`
//! 2. State on disk: `shared_file`, `events`, `config`
//! 3. The outside world: `access`, `keychain`, `oauth`, `objects`, `gateway`, `upstream`,
//!    `urls`, `clients`
//! 4. Files: `files`, `inputs`, `roots`, `store`, `refs`
//! 5. The engine: `engine`
//! 6. Serving: `available`, `query`, `activity`, `config_watch`, `server`
//! 7. Doors for the shells: `http`, `ipc`, `control`
//!
//! A module is public only when a shell (the `offload` command, the app, the benches) needs it;
//! what they name of the others is re-exported from those (`control` for the app's types).

pub mod access;
pub mod activity;
mod available;
mod cells;
mod clients;
mod clip;
pub mod config;
pub mod config_watch;
pub mod control;
mod crypto;
mod engine;
mod error;
mod events;
pub mod files;
mod formats;
mod gateway;
pub mod http;
mod inputs;
pub mod ipc;
pub mod keychain;
pub mod logging;
pub mod oauth;
mod objects;
mod query;
mod refs;
mod roots;
mod rounds;
pub mod server;
mod sessions;
mod shared_file;
mod special_files;
mod store;
mod units;
mod upstream;
mod urls;
mod whole_file;

pub use engine::{Engine, EngineOptions, Reloaded};
pub use error::{ErrorCode, ToolError};
pub use store::StoreRequest;
