//! `offload mcp` in front of a host (`offload serve`, which the desktop app also is): the shim
//! connects to the host's socket and only pumps bytes; every client shares the host's engine and
//! upstream pool; without a host the shim runs its own engine.

use std::time::Duration;

use offload_testkit::{TestContext, call, structured, text};
use serde_json::json;

use crate::{fx, with_fixture};

/// Waits until the log holds `needle` (both processes of a test append to it).
async fn logged(ctx: &TestContext, needle: &str) -> String {
    for _ in 0..200 {
        let log = ctx.log();
        if log.contains(needle) {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{needle:?} never logged:\n{}", ctx.log())
}

#[tokio::test]
async fn shims_connect_to_the_host_and_share_its_upstreams() {
    let ctx = with_fixture();
    let _host = ctx.host().await;
    let a = ctx.client().await;
    let b = ctx.client().await;
    logged(&ctx, "connected to the Offload app").await;
    // One engine: the fixture behind both shims is one process with one counter.
    let pid_a = text(&fx(&a, "pid", json!({})).await);
    let pid_b = text(&fx(&b, "pid", json!({})).await);
    assert_eq!(pid_a, pid_b);
    assert_eq!(text(&fx(&a, "counter", json!({})).await), "1");
    assert_eq!(text(&fx(&b, "counter", json!({})).await), "2");
    // The host knows who is connected (name and version from each handshake).
    let log = logged(&ctx, "client connected").await;
    let connected = log
        .lines()
        .filter(|l| l.contains("client connected") && l.contains("offload-tests"))
        .count();
    assert_eq!(connected, 2, "{log}");
    // The file tools run in the host too.
    std::fs::write(ctx.root.join("a.txt"), "one\ntwo\n").unwrap();
    let path = ctx.root.join("a.txt").to_string_lossy().into_owned();
    let s = call(&a, "summarize_file", json!({"path": path})).await;
    assert_eq!(structured(&s)["line_count"], 2);
    a.cancel().await.unwrap();
    logged(&ctx, "client disconnected").await;
    // The other session goes on after one leaves.
    assert_eq!(text(&fx(&b, "counter", json!({})).await), "3");
    b.cancel().await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn the_socket_is_for_this_user_only_and_one_host_at_a_time() {
    use std::os::unix::fs::PermissionsExt;
    let ctx = with_fixture();
    let _host = ctx.host().await;
    let socket = std::fs::metadata(ctx.socket()).unwrap();
    assert_eq!(socket.permissions().mode() & 0o777, 0o600);
    let dir = std::fs::metadata(ctx.socket().parent().unwrap()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
    // A second host refuses to take over a live socket.
    let mut second = tokio::process::Command::new(offload_testkit::target_bin("offload"));
    second.arg("serve");
    ctx.isolate(&mut second);
    let out = second.output().await.unwrap();
    assert!(!out.status.success());
    logged(&ctx, "already serving").await;
}

#[tokio::test]
async fn without_a_host_the_shim_runs_its_own_engine() {
    let ctx = with_fixture();
    {
        // A host that died without cleaning up leaves its socket file behind.
        let mut host = ctx.host().await;
        host.child.start_kill().unwrap();
        host.child.wait().await.unwrap();
    }
    let client = ctx.client().await;
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "hi"})).await),
        "hi"
    );
    logged(&ctx, "serving in embedded mode").await;
    client.cancel().await.unwrap();
    // Asking for the app when none runs is a clear failure, not a silent fallback.
    let out = ctx
        .offload_command(&["--mode", "app"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    logged(&ctx, "no Offload app answers").await;
    // A new host replaces the stale socket.
    let _host = ctx.host().await;
    let client = ctx.client_with(&["--mode", "app"]).await;
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "again"})).await),
        "again"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn directories_on_the_command_line_keep_the_shim_embedded() {
    let ctx = with_fixture();
    let _host = ctx.host().await;
    let own = ctx.tmp.path().join("own");
    std::fs::create_dir_all(&own).unwrap();
    let client = ctx.client_with(&[own.to_str().unwrap()]).await;
    let dirs = call(&client, "list_allowed_directories", json!({})).await;
    assert!(text(&dirs).contains("own"), "{}", text(&dirs));
    logged(&ctx, "running an embedded engine").await;
    client.cancel().await.unwrap();
}

/// `offload mcp --expose direct` through the host: the host serves this client in direct mode
/// (the choice travels in a preamble line before the MCP messages) and others as configured.
#[tokio::test]
async fn a_clients_expose_choice_reaches_the_host() {
    let ctx = with_fixture();
    let _host = ctx.host().await;
    let direct = ctx.client_with(&["--expose", "direct"]).await;
    let names: Vec<String> = direct
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"fx__echo".to_owned()), "{names:?}");
    let r = call(&direct, "fx__echo", json!({"text": "through the host"})).await;
    assert_eq!(text(&r), "through the host");
    let meta = ctx.client().await;
    assert_eq!(
        meta.list_all_tools().await.unwrap().len(),
        11,
        "the configuration's meta mode: Offload's eleven tools"
    );
    logged(&ctx, "connected to the Offload app").await;
    direct.cancel().await.unwrap();
    meta.cancel().await.unwrap();
}
