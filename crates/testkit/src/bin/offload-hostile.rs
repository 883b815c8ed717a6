//! A hostile MCP server as a native program (rmcp, the official Rust SDK): its one tool,
//! `attempt`, tries what a compromised server would and answers "ok: ..." or "refused: <the
//! error>" — the same tool as `tests/interop/hostile_server.py`, whose docstring lists the
//! kinds. Offload's sandbox tests run it confined and, as the positive control, unconfined.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

struct Hostile;

fn attempt(args: &serde_json::Map<String, Value>) -> Result<String, String> {
    let s = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    let n = |key: &str| args.get(key).and_then(Value::as_u64).unwrap_or_default();
    let io = |e: std::io::Error| e.to_string();
    let parent = || nix::unistd::Pid::from_raw(std::os::unix::process::parent_id() as i32);
    match s("kind") {
        "read" => std::fs::read_to_string(s("path"))
            .map(|t| t.chars().take(200).collect())
            .map_err(io),
        "write" => std::fs::write(s("path"), "x")
            .map(|()| "written".into())
            .map_err(io),
        "link" => std::fs::hard_link(s("path"), s("to"))
            .map(|()| "linked".into())
            .map_err(io),
        "rename" => std::fs::rename(s("path"), s("to"))
            .map(|()| "moved".into())
            .map_err(io),
        "tcp" => std::net::TcpStream::connect(("127.0.0.1", n("port") as u16))
            .map(|_| "connected".into())
            .map_err(io),
        "udp" => std::net::UdpSocket::bind("127.0.0.1:0")
            .and_then(|u| u.send_to(b"x", ("127.0.0.1", n("port") as u16)))
            .map(|_| "sent".into())
            .map_err(io),
        "unix" => std::os::unix::net::UnixStream::connect(s("path"))
            .map(|_| "connected".into())
            .map_err(io),
        "environ" => std::fs::read(format!("/proc/{}/environ", parent()))
            .map(|b| String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned())
            .map_err(io),
        "signal" => nix::sys::signal::kill(parent(), None)
            .map(|()| "signalled".into())
            .map_err(|e| e.to_string()),
        "ptrace" => nix::sys::ptrace::traceme()
            .map(|()| "traced".into())
            .map_err(|e| e.to_string()),
        "memory" => {
            let bytes = (n("mb") as usize) << 20;
            let mut block: Vec<u8> = Vec::new();
            block.try_reserve_exact(bytes).map_err(|e| e.to_string())?;
            block.resize(bytes, 1);
            Ok(block.len().to_string())
        }
        "fetch" => fetch(s("path")),
        "where" => Ok(format!(
            "{} {}",
            std::env::var("HOME").unwrap_or_default(),
            std::env::var("TMPDIR").unwrap_or_default()
        )),
        other => Err(format!("unknown kind {other}")),
    }
}

/// An HTTP GET of `url` (`http://host:port/path`), through the proxy `HTTP_PROXY` names when it
/// is set (as most clients do), else directly; the body, or the status line of a refusal.
fn fetch(url: &str) -> Result<String, String> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let authority = rest.split('/').next().unwrap_or_default();
    let via = std::env::var("HTTP_PROXY").ok();
    let (to, request) = match via.as_deref().and_then(|p| p.strip_prefix("http://")) {
        Some(proxy) => (
            proxy.trim_end_matches('/').to_owned(),
            format!("GET {url} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"),
        ),
        None => {
            let path = &rest[authority.len()..];
            let path = if path.is_empty() { "/" } else { path };
            (
                authority.to_owned(),
                format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"),
            )
        }
    };
    let mut stream = std::net::TcpStream::connect(&to).map_err(|e| e.to_string())?;
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) == Some("200") {
        Ok(body.to_owned())
    } else {
        Err(status.to_owned())
    }
}

impl ServerHandler for Hostile {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("offload-hostile", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let Value::Object(schema) = json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string"}, "path": {"type": "string"}, "to": {"type": "string"},
                "port": {"type": "integer"}, "mb": {"type": "integer"},
            },
            "required": ["kind"],
        }) else {
            unreachable!("an object")
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "attempt",
            "Try one thing a compromised server would.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let text = match attempt(&args) {
            Ok(what) => format!("ok: {what}"),
            Err(e) => {
                // As servers do: the error on stderr, with the path it was about.
                let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
                eprintln!("hostile: {e}: '{path}'");
                format!("refused: {e}")
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let running = Hostile
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    running.waiting().await?;
    Ok(())
}
