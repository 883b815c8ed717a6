//! A FIFO (or any file that is not a regular file) is refused before anything blocks on it,
//! by every tool that reads files and by the file commands; Offload still exits cleanly.

use std::time::{Duration, Instant};

use offload_testkit::{call, error_code, text};
use serde_json::json;

use crate::with_fixture;

#[tokio::test]
async fn a_fifo_is_refused_at_once_by_every_tool() {
    let ctx = with_fixture();
    let fifo = ctx.root.join("pipe.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let path = fifo.display().to_string();
    let client = ctx.client().await;
    let calls = [
        ("read_file", json!({"path": path})),
        ("get_file_schema", json!({"path": path})),
        ("summarize_file", json!({"path": path})),
        (
            "call_tool_with_file_content",
            json!({"server": "fx", "tool_name": "echo", "file_path": path, "data_key": "text"}),
        ),
        (
            "call_tool",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": path}}}),
        ),
    ];
    for (tool, args) in calls {
        let start = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(5), call(&client, tool, args))
            .await
            .unwrap_or_else(|_| panic!("{tool} hung on a FIFO"));
        assert!(start.elapsed() < Duration::from_secs(2), "{tool}");
        assert_eq!(error_code(&r), "path_unusable", "{tool}: {}", text(&r));
        assert!(text(&r).contains("FIFO"), "{tool}: {}", text(&r));
    }
    client.cancel().await.unwrap();

    for command in ["read", "schema", "summarize"] {
        let out = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::process::Command::new(offload_testkit::target_bin("offload"))
                .args([command, &path])
                .stdin(std::process::Stdio::null())
                .output(),
        )
        .await
        .unwrap_or_else(|_| panic!("offload {command} hung on a FIFO"))
        .unwrap();
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("FIFO"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
