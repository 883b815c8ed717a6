//! Starting `offload mcp` for a figure and reading its memory.

use std::time::Duration;

use offload_testkit::{Client, Recorder, TestContext};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

/// `cmd` (an `offload` command of `ctx`) set to run as users run it: default log level, to
/// stderr (which the benches discard).
pub fn as_users(mut cmd: tokio::process::Command) -> tokio::process::Command {
    cmd.env("OFFLOAD_LOG", "info")
        .env_remove("OFFLOAD_LOG_FILE");
    cmd
}

/// `offload mcp` as users run it, and its pid.
pub async fn spawn(ctx: &TestContext) -> (Client, u32) {
    let cmd = as_users(ctx.offload_command(&[]));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn offload");
    let pid = transport.id().expect("pid");
    (
        Recorder::default()
            .serve(transport)
            .await
            .expect("handshake"),
        pid,
    )
}

/// Peak resident set size of a process so far, in MiB (Linux: VmHWM).
pub fn peak_rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}
