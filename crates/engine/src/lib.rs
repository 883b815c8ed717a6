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

pub mod access;
pub mod activity;
pub mod available;
pub mod cells;
pub mod clients;
pub mod clip;
pub mod config;
pub mod config_watch;
pub mod control;
mod crypto;
pub mod engine;
pub mod error;
pub mod events;
pub mod files;
pub mod formats;
pub mod gateway;
pub mod http;
pub mod inputs;
pub mod ipc;
pub mod keychain;
pub mod logging;
pub mod oauth;
pub mod objects;
pub mod query;
pub mod refs;
pub mod roots;
pub mod rounds;
pub mod server;
pub mod sessions;
mod shared_file;
pub mod special_files;
pub mod store;
pub mod units;
pub mod upstream;
pub mod urls;
mod whole_file;

pub use engine::{Engine, EngineOptions, Reloaded};
pub use error::{ErrorCode, ToolError};
