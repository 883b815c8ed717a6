//! `@wonderwhy-er/desktop-commander`, the peer whose `read_file` the file tools are measured
//! beside: started from its npm install with a throw-away home (telemetry off, only the bench
//! directory allowed), driven over stdio by the same MCP client as Offload.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use offload_testkit::{Client, Recorder};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// Where `scripts/bench.sh` installs it; `OFFLOAD_BENCH_DESKTOP_COMMANDER` names another
/// `dist/index.js`.
fn entry() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OFFLOAD_BENCH_DESKTOP_COMMANDER") {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home)
        .join(".cache/offload/desktop-commander/node_modules/@wonderwhy-er/desktop-commander/dist/index.js");
    path.exists().then_some(path)
}

pub struct DesktopCommander {
    client: Client,
    pub pid: u32,
    /// From its package.json.
    pub version: String,
    _home: tempfile::TempDir,
}

/// One `read_file` answer: its time and the line numbers it held (the bench's text files number
/// their lines in their first ten characters).
pub struct Read {
    pub ms: f64,
    pub lines: Vec<u64>,
}

impl DesktopCommander {
    /// Started with `allowed` as its only directory; `None` (with the reason printed) when it is
    /// not installed or does not start.
    pub async fn start(allowed: &Path) -> Option<Self> {
        let Some(entry) = entry() else {
            println!(
                "desktop-commander: not installed (scripts/bench.sh installs it from npm); skipped"
            );
            return None;
        };
        let home = tempfile::tempdir().ok()?;
        let config = home.path().join(".claude-server-commander");
        std::fs::create_dir_all(&config).ok()?;
        let settings = json!({
            "allowedDirectories": [allowed],
            "telemetryEnabled": false,
            "fileReadLineLimit": 1000,
        });
        std::fs::write(config.join("config.json"), settings.to_string()).ok()?;
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(&entry)
            .env("HOME", home.path())
            .env("NODE_ENV", "production");
        let spawned = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn();
        let (transport, _) = match spawned {
            Ok(t) => t,
            Err(e) => {
                println!("desktop-commander: cannot start node ({e}); skipped");
                return None;
            }
        };
        let pid = transport.id()?;
        let manifest = entry
            .parent()
            .and_then(Path::parent)
            .map(|dir| dir.join("package.json"))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        let version = manifest
            .as_ref()
            .and_then(|m| m["version"].as_str())
            .unwrap_or("(unknown version)")
            .to_owned();
        let started = tokio::time::timeout(
            Duration::from_secs(60),
            Recorder::default().serve(transport),
        )
        .await;
        match started {
            Ok(Ok(client)) => Some(Self {
                client,
                pid,
                version,
                _home: home,
            }),
            _ => {
                println!("desktop-commander: no MCP handshake within 60 s; skipped");
                None
            }
        }
    }

    /// Its `read_file {path, offset, length}`, or why it failed (error answer, 5-minute timeout).
    pub async fn read(&self, path: &Path, offset: i64, length: u64) -> Result<Read, String> {
        let mut params = CallToolRequestParams::new("read_file");
        let args = json!({"path": path, "offset": offset, "length": length});
        params.arguments = args.as_object().cloned();
        let t = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(300), self.client.call_tool(params))
            .await
            .map_err(|_| "no answer within 300 s".to_owned())?
            .map_err(|e| e.to_string())?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let text: String = answer
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        if answer.is_error == Some(true) {
            return Err(text.chars().take(200).collect());
        }
        Ok(Read {
            ms,
            lines: numbered_lines(&text),
        })
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// The numbers of the lines in `text` that look like the bench's (`0000000042 lorem…`).
pub fn numbered_lines(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let (n, rest) = l.split_at_checked(10)?;
            (rest.starts_with(' ') && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| n.parse().ok())
                .flatten()
        })
        .collect()
}

/// "right" when `lines` are exactly `first..first + count`, else what came back.
pub fn verdict(lines: &[u64], first: u64, count: u64) -> String {
    let expected: Vec<u64> = (first..first + count).collect();
    if lines == expected {
        return "right".to_owned();
    }
    match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => format!(
            "WRONG: {} lines {a}..={b}, asked {count} from {first}",
            lines.len()
        ),
        _ => "WRONG: no lines".to_owned(),
    }
}
