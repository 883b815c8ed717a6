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

/// CPU time (user + system, every thread) a process has used so far, in seconds (Linux; the
/// kernel counts in ticks of 10 ms).
pub fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => (user + system) / 100.0,
        _ => f64::NAN,
    }
}

/// The processes `pid` started (its upstream servers, for `offload mcp`).
pub fn children(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}
