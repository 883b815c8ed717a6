//! A raw JSON-RPC session with `offload mcp` over its real pipes, for what an rmcp client hides:
//! the order of messages on the wire, progress tokens of our choosing, cancellation mid-call.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::TestContext;

pub struct Wire {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Wire {
    /// `offload mcp` started in `ctx`, initialized.
    pub async fn start(ctx: &TestContext) -> Self {
        let mut child = ctx
            .offload_command(&[])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn offload mcp");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut wire = Self {
            child,
            stdin,
            lines,
        };
        wire.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "wire", "version": "0"}}}),
        )
        .await;
        let answer = wire.next().await;
        assert_eq!(answer["id"], 0, "initialize answered first: {answer}");
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        wire
    }

    /// The `offload mcp` process's id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("offload mcp is running")
    }

    /// Kills `offload mcp` with SIGKILL (no chance to clean up) and waits for it to be gone.
    pub async fn kill(&mut self) {
        self.child.start_kill().expect("SIGKILL offload mcp");
        let _ = self.child.wait().await;
    }

    pub async fn send(&mut self, message: Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write to offload");
    }

    /// Sends `tools/call` with request `id` and, when given, a progress token.
    pub async fn call(&mut self, id: u64, tool: &str, args: Value, progress: Option<&str>) {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(token) = progress {
            params["_meta"] = json!({"progressToken": token});
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
    }

    /// Tells offload the client gave up on request `id`.
    pub async fn cancel(&mut self, id: u64) {
        self.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the user stopped it"}}),
        )
        .await;
    }

    /// The next message from offload.
    pub async fn next(&mut self) -> Value {
        let line = self
            .lines
            .next_line()
            .await
            .expect("read from offload")
            .expect("offload closed its stdout");
        serde_json::from_str(&line).expect("a JSON-RPC message per line")
    }

    /// Reads up to the answer to request `id`; returns it and the `(progress, total)` of the
    /// progress notifications for `token` seen before it.
    pub async fn answer(&mut self, id: u64, token: &str) -> (Value, Vec<(f64, Option<f64>)>) {
        let mut progress = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == id {
                return (message, progress);
            }
            if message["method"] == "notifications/progress"
                && message["params"]["progressToken"] == token
            {
                let p = &message["params"];
                progress.push((
                    p["progress"].as_f64().expect("progress"),
                    p["total"].as_f64(),
                ));
            }
        }
    }
}
