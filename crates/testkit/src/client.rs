//! A real rmcp client over `offload mcp`'s pipes, recording what the server sends on its own.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

use crate::text;

/// Records what a server sends the client on its own.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// How many `notifications/resources/list_changed` arrived.
    pub resource_list_changed: Arc<std::sync::atomic::AtomicUsize>,
    /// How many `notifications/tools/list_changed` arrived.
    pub tool_list_changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("offload-tests", "0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tool_list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resource_list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// Starts `cmd` and completes the MCP handshake with it.
pub async fn connect(cmd: tokio::process::Command) -> Client {
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn MCP server");
    Recorder::default()
        .serve(transport)
        .await
        .expect("MCP handshake")
}

/// Calls `name` with `args` (an object) and returns the result.
pub async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = Some(args);
    client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `call_tool` of `server`'s `tool`, asked again every 5 s while the answer says the server is
/// still starting (a first start downloading its package outlasts its start timeout), as a
/// model is told to — for at most `within`.
pub async fn call_once_started(
    client: &Client,
    server: &str,
    tool: &str,
    args: &Value,
    within: std::time::Duration,
) -> CallToolResult {
    let started = std::time::Instant::now();
    loop {
        let r = call(
            client,
            "call_tool",
            json!({"server": server, "tool_name": tool, "tool_args": args}),
        )
        .await;
        let said = text(&r);
        let starting = said.contains("did not finish starting") || said.contains("still starting");
        if !starting || started.elapsed() >= within {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    }
}
