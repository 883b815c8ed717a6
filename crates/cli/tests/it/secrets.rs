//! A secret given to upstreams through `${env:}` (in `env`, `args` and `headers`) and one passed
//! as a tool argument must appear nowhere Offload writes: its log (at debug level), the audit
//! log, the records index, stored files, and every answer and error message. (`${keyring:}` is
//! scanned the same way by the app's E2E run, which has a real Secret Service.)

use offload_testkit::{TestContext, call, connect, text};
use serde_json::json;

const SECRET: &str = "sk-live-9f8e7d6c5b4a";

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

#[tokio::test]
async fn a_secret_never_reaches_logs_records_stored_files_or_messages() {
    let ctx = TestContext::new();
    let mut fx = TestContext::fixture(&["--stderr", "starting"]);
    fx["env"] = json!({"API_TOKEN": "${env:OFFLOAD_TEST_TOKEN}"});
    ctx.write_servers(json!({
        "fx": fx,
        "with-arg": TestContext::fixture(&["--stderr", "${env:OFFLOAD_TEST_TOKEN}"]),
        "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer ${env:OFFLOAD_TEST_TOKEN}"}},
        "missing": {"command": "fixture-not-here", "env": {"K": "${env:OFFLOAD_TEST_TOKEN}"}},
    }));
    let mut cmd = ctx.offload_command(&[]);
    cmd.env("OFFLOAD_TEST_TOKEN", SECRET);
    let client = connect(cmd).await;
    std::fs::write(ctx.root.join("rows.csv"), "id,name\n1,a\n").unwrap();

    let fx_call = |tool: &str, args: serde_json::Value| json!({"server": "fx", "tool_name": tool, "tool_args": args});
    let mut answers = Vec::new();
    for (tool, args) in [
        (
            "call_tool",
            fx_call("echo", json!({"text": "hello", "api_key": SECRET})),
        ),
        (
            "call_tool",
            fx_call("fail", json!({"message": "upstream says no"})),
        ),
        (
            "call_tool_and_store",
            fx_call("structured", json!({"n": 2})),
        ),
        (
            "call_tool_and_store",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "t", "password": SECRET}, "file_format": "json"}),
        ),
        (
            "call_tool_with_file_content",
            json!({"server": "fx", "tool_name": "received", "file_path": ctx.root.join("rows.csv"), "data_key": "rows", "tool_args": {"token": SECRET}}),
        ),
        (
            "call_tool",
            json!({"server": "remote", "tool_name": "echo"}),
        ),
        (
            "call_tool",
            json!({"server": "missing", "tool_name": "echo"}),
        ),
        (
            "call_tool",
            json!({"server": "with-arg", "tool_name": "crash"}),
        ),
        ("list_available_tools", json!({})),
        ("summarize_file", json!({"path": ctx.root.join("rows.csv")})),
    ] {
        let r = call(&client, tool, args).await;
        answers.push(format!("{tool}: {} {:?}", text(&r), r.structured_content));
    }
    client.cancel().await.unwrap();

    // The argument-borne secret was forwarded (the upstream needs it) but recorded redacted.
    let records =
        std::fs::read_to_string(ctx.home.join(".local/share/offload/records.jsonl")).unwrap();
    assert!(records.contains("[redacted]"), "{records}");

    let mut places = vec![(
        "the log".to_owned(),
        std::fs::read_to_string(&ctx.log_path).unwrap(),
    )];
    for file in files_under(&ctx.home.join(".local/share/offload"))
        .into_iter()
        .chain(files_under(&ctx.root))
    {
        let content = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        places.push((file.display().to_string(), content));
    }
    for (i, a) in answers.iter().enumerate() {
        places.push((format!("answer {i}"), a.clone()));
    }
    assert!(places.len() > 8, "{places:?}");
    for (place, content) in &places {
        let lines: Vec<&str> = content.lines().filter(|l| l.contains(SECRET)).collect();
        assert!(
            lines.is_empty(),
            "the secret is in {place}:\n{}",
            lines.join("\n")
        );
    }
}
