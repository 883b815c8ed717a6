//! What reaches the model for answers of every size, table and text: through `offload mcp` in
//! direct mode (the tool called by its own name, the default 16 KiB inline budget deciding)
//! beside the same tool called directly, and beside the points where clients spill a big
//! answer to a file of their own (VS Code about 8 KB, Claude Code 50,000 characters).
//!
//! "Reaches the model" is counted as a client shows a result: its text blocks, or its
//! structured content when it has some (Claude Code shows that instead of the text); the
//! larger of the two.

use offload_testkit::{TestContext, call, target_bin};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::json;

/// Rows of the fixture's `rows` tool are about 110 bytes each.
const ROW_BYTES: u64 = 110;
const SIZES: [(&str, u64); 5] = [
    ("4 KB", 4_000),
    ("20 KB", 20_000),
    ("60 KB", 60_000),
    ("1 MB", 1_000_000),
    ("50 MB", 50_000_000),
];

/// The bytes of `r` a model is shown.
fn shown(r: &CallToolResult) -> usize {
    let text: usize = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.len()))
        .sum();
    let structured = r
        .structured_content
        .as_ref()
        .map_or(0, |v| v.to_string().len());
    text.max(structured)
}

fn args(kind: &str, bytes: u64) -> serde_json::Value {
    match kind {
        "table" => json!({"n": (bytes / ROW_BYTES).max(1)}),
        _ => json!({"bytes": bytes}),
    }
}

/// What a model would be shown of `tool`'s answer from the fixture connected directly, read off
/// the raw stdio stream: rmcp's client drops a line over 16 MiB and its call then waits forever,
/// so past that size the bytes are counted here, as a client that reads any line would.
async fn shown_raw(tool: &str, args: serde_json::Value) -> anyhow::Result<usize> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new(target_bin("offload-fixture"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("piped")).lines();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}),
    ];
    for request in requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await?;
    }
    while let Some(line) = lines.next_line().await? {
        let message: serde_json::Value = serde_json::from_str(&line)?;
        if message["id"] == 2 {
            let result: CallToolResult = serde_json::from_value(message["result"].clone())?;
            return Ok(shown(&result));
        }
    }
    anyhow::bail!("the fixture ended without answering {tool}")
}

pub async fn run(most_bytes: u64) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "direct"},
        "mcpServers": {"fx": TestContext::fixture(&[])},
    }));
    let direct =
        offload_testkit::connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    let offload =
        offload_testkit::connect(crate::offload::as_users(ctx.offload_command(&[]))).await;

    println!(
        "bytes a model is shown per answer (text, or structured content when it has some), direct mode, inline budget 16 KiB"
    );
    println!("clients' own spill points: VS Code ~8,000 bytes, Claude Code 50,000 characters");
    println!(
        "{:<6} {:<7} {:>12} {:>12} {:>9}  offload's answer",
        "kind", "answer", "directly", "offload", "ratio"
    );
    for kind in ["table", "text"] {
        let tool = if kind == "table" { "rows" } else { "large" };
        for (label, bytes) in SIZES.into_iter().filter(|(_, b)| *b <= most_bytes) {
            let a = if bytes < 8_000_000 {
                let mut params = CallToolRequestParams::new(tool);
                params.arguments = args(kind, bytes).as_object().cloned();
                shown(&direct.call_tool(params).await?)
            } else {
                shown_raw(tool, args(kind, bytes)).await?
            };
            let through = call(&offload, &format!("fx__{tool}"), args(kind, bytes)).await;
            anyhow::ensure!(
                through.is_error != Some(true),
                "{kind} {label}: {through:?}"
            );
            let b = shown(&through);
            let how = if through
                .structured_content
                .as_ref()
                .is_some_and(|s| s.get("path").is_some())
            {
                "stored, link + summary + preview"
            } else {
                "inline, as the server sent it"
            };
            println!(
                "{kind:<6} {label:<7} {a:>12} {b:>12} {:>8.4}x  {how}",
                b as f64 / a as f64
            );
        }
    }
    direct.cancel().await?;
    offload.cancel().await?;
    Ok(())
}
