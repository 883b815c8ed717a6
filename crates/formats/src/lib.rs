//! Offload's file formats: what reads and writes them, knowing nothing of MCP, roots or the
//! engine. Callers open the file (through their own guard) and hand it over.
//!
//! - [`files`]: schema, summary and exact reads of files of any size (text, CSV/TSV, JSON,
//!   JSONL, YAML, XML, workbooks, Parquet, PDF, Word, images, compressed), streaming.
//! - [`inputs`]: a file parsed into JSON for a tool's arguments (whole, or item by item).
//! - [`output`]: a JSON value rendered as a valid file of each format.
//! - [`Format`]: every format by name, and which of the above take it.
//!
//! Small helpers the engine shares: [`clip`] (text cut to a budget), [`units`] (sizes in
//! words), [`special_files`] (opening without blocking on a FIFO or a device).

pub mod cells;
pub mod clip;
pub mod files;
mod format;
pub mod inputs;
pub mod output;
pub mod special_files;
pub mod units;

pub use format::Format;
