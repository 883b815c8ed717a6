//! `offload tools list|approve`: what clients see of the upstream tools, and approving tools
//! held because their definition changed (pinning), for machines without the desktop app.

use std::process::ExitCode;

use clap::Subcommand;
use offload_engine::control;

use crate::mcp::{self, ConfigChoice};

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// The mode in effect, the upstream tools listed to clients, and those held for review.
    List,
    /// Approve the current definition of TOOL of SERVER (every held tool of SERVER without TOOL).
    Approve {
        server: String,
        tool: Option<String>,
    },
}

pub fn run(config: ConfigChoice, command: ToolsCommand) -> ExitCode {
    mcp::with_engine(config, |engine| async move {
        match command {
            ToolsCommand::List => {
                // Every server's tools, however long its start takes (within its own start
                // timeout, a minute at most here).
                let view =
                    control::tools_view_settled(&engine, std::time::Duration::from_secs(60)).await;
                let mut out = format!("mode: {} ({})\n", view.mode, view.why);
                let c = view.cost;
                out.push_str(&format!(
                    "tool list a client's model reads with every request: direct {} tools, {} bytes; meta {} tools, {} bytes\n",
                    c.direct_tools, c.direct_bytes, c.meta_tools, c.meta_bytes
                ));
                for e in &view.exposed {
                    out.push_str(&format!("  {}  ({}/{})\n", e.name, e.server, e.tool));
                }
                for s in &view.skipped {
                    out.push_str(&format!("  not listed: {s}\n"));
                }
                for h in &view.held {
                    let what = match &h.previous {
                        None => "new tool on a pinned server".to_owned(),
                        Some(previous) => changed_fields(previous, &h.current),
                    };
                    out.push_str(&format!(
                        "held: {}/{} ({what}); approve with `offload tools approve {} {}`\n",
                        h.server, h.tool, h.server, h.tool
                    ));
                }
                print(&out);
                ExitCode::SUCCESS
            }
            ToolsCommand::Approve { server, tool } => {
                match control::approve_tool(&engine, &server, tool.as_deref()).await {
                    Ok(n) => {
                        print(&format!("approved {n} tool definition(s) of {server}\n"));
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("offload: {}", e.message);
                        ExitCode::FAILURE
                    }
                }
            }
        }
    })
}

/// Which parts of a definition changed: `description, inputSchema`.
fn changed_fields(previous: &serde_json::Value, current: &serde_json::Value) -> String {
    let keys = [
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    ];
    let changed: Vec<&str> = keys
        .into_iter()
        .filter(|k| previous.get(k) != current.get(k))
        .collect();
    format!("changed: {}", changed.join(", "))
}

/// A human command: stdout is not a protocol stream here.
#[allow(clippy::print_stdout)]
fn print(text: &str) {
    print!("{text}");
}
