//! What published servers answer, stored as the data it is, by concern: tables (`tables`: the
//! Python SDK's `{"result": "<json>"}` and server-filesystem's `{"content": ...}` unwrapped,
//! mcp-server-sqlite's Python `repr` rows read as a table, server-memory's answers kept within
//! the inline budget with both its tables, rows of values from mcp-server-motherduck and
//! excel-mcp-server) and texts (`texts`: mcp-server-git's `git_log`, a Markdown document, pages
//! as mcp-server-fetch and markitdown-mcp answer them, stored as text and read by lines).
//!
//! `#[ignore]`d for a bare `cargo test` (the peers come from `scripts/setup-interop.sh`); the
//! test script runs them with `--include-ignored`.

mod tables;
mod texts;
