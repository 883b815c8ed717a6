//! End-to-end tests of `offload mcp`: the built binary over real pipes, a real rmcp client, and
//! the real fixture MCP server as upstream. Interop tests with published SDKs and servers are in
//! `interop` (they need `scripts/setup-interop.sh`, which the test script runs).

mod buckets;
mod calls;
mod chart;
mod compat;
mod compressed;
mod config;
mod conformance;
mod crash;
mod direct;
mod discovery;
mod documents;
mod escape;
mod faults;
mod file_content;
mod file_tools;
mod first_minute;
mod hostile;
mod http;
mod image;
mod interop;
mod liveness;
mod new_user;
mod published;
mod published_answers;
mod query;
mod relay;
mod sandbox;
mod script_worker;
mod scripts;
mod secrets;
mod several_files;
mod shim;
mod sign_in;
mod special_files;
mod store;
mod team;
mod traces;
mod urls;
mod workflows;

use offload_testkit::TestContext;
use serde_json::json;

/// Calls `tool` of the fixture server `fx` through `call_tool`.
pub async fn fx(
    client: &offload_testkit::Client,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    offload_testkit::call(
        client,
        "call_tool",
        json!({"server": "fx", "tool_name": tool, "tool_args": args}),
    )
    .await
}

/// A context with one fixture server called `fx`.
pub fn with_fixture() -> TestContext {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    ctx
}
