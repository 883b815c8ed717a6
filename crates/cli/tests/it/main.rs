//! End-to-end tests of `offload mcp`: the built binary over real pipes, a real rmcp client, and
//! the real fixture MCP server as upstream. Interop tests with published SDKs and servers are in
//! `interop` (they need `scripts/setup-interop.sh`, which the test script runs).

mod calls;
mod config;
mod discovery;
mod faults;
mod interop;
mod store;

use offload_testkit::TestContext;
use serde_json::json;

/// A context with one fixture server called `fx`.
pub fn with_fixture() -> TestContext {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    ctx
}
