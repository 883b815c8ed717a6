//! Offload's engine: everything that is not a window.
//!
//! It owns the configuration, the allowed roots and the path guard, the pool of upstream MCP
//! servers, and the MCP server surface that clients talk to. It must never depend on a GUI
//! toolkit: the desktop app and the `offload` command are thin shells over this crate.

pub mod access;
pub mod activity;
pub mod clients;
pub mod clip;
pub mod config;
pub mod config_watch;
pub mod control;
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
pub mod upstream;
pub mod urls;
mod whole_file;

pub use engine::{Engine, EngineOptions, Reloaded};
pub use error::{ErrorCode, ToolError};
