//! Crash safety: `offload mcp` killed with SIGKILL (no chance to clean up) in the middle of
//! large stores and of batch runs. No partial file may ever be visible in a root, the records
//! index must list every stored file after a restart, and a cut batch run must still tell which
//! batches reached the upstream (the audit log's `batch_part` events).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use offload_testkit::TestContext;
use offload_testkit::wire::Wire;
use rmcp::model::PaginatedRequestParams;
use serde_json::{Value, json};

use crate::with_fixture;

const ROWS: u64 = 60_000;

/// Every file under `dir` (two levels), by path.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Whether the process holds a file being written inside `root`: an unnamed `O_TMPFILE` file
/// (shown as `<dir>/#<inode> (deleted)`) or a hidden `.offload-*.partial` temporary file.
fn writing_in(pid: u32, root: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| {
            let text = target.to_string_lossy();
            target.starts_with(root) && (text.ends_with(" (deleted)") || text.ends_with(".partial"))
        })
    })
}

/// Checks that `path` is a whole stored answer of the fixture's `rows` tool.
fn assert_whole(path: &Path) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        !name.starts_with('.'),
        "a temporary file is visible: {name}"
    );
    let bytes = std::fs::read(path).unwrap();
    let rows = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => serde_json::from_slice::<Value>(&bytes)
            .unwrap_or_else(|e| panic!("{name} is not whole JSON: {e}"))
            .as_array()
            .map(Vec::len),
        Some("yaml") => serde_yaml::from_slice::<Value>(&bytes)
            .unwrap_or_else(|e| panic!("{name} is not whole YAML: {e}"))
            .as_array()
            .map(Vec::len),
        Some("csv") => {
            let mut reader = csv::Reader::from_reader(&bytes[..]);
            let mut n = 0;
            for record in reader.records() {
                record.unwrap_or_else(|e| panic!("{name} is not whole CSV: {e}"));
                n += 1;
            }
            Some(n)
        }
        other => panic!("unexpected file {name} ({other:?})"),
    };
    assert_eq!(rows, Some(ROWS as usize), "{name} lost rows");
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "never saw: {what}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn stores_killed_at_any_moment_leave_whole_files_or_nothing_and_the_index_recovers() {
    let ctx = with_fixture();
    let mut mid_write = 0;
    for round in 0..6 {
        let before = files(&ctx.root).len();
        let mut wire = Wire::start(&ctx).await;
        let pid = wire.pid();
        for (id, format) in [(1, "json"), (2, "csv"), (3, "yaml")] {
            let args = json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": ROWS},
                              "file_format": format});
            wire.call(id, "call_tool_and_store", args, None).await;
        }
        if round % 2 == 0 {
            // In the middle of writing a file.
            wait_until("a file being written", || writing_in(pid, &ctx.root)).await;
            mid_write += 1;
        } else {
            // The moment a file has its name: before or after its record was written.
            wait_until("a stored file", || files(&ctx.root).len() > before).await;
        }
        wire.kill().await;
        for path in files(&ctx.root) {
            assert_whole(&path);
        }
    }
    assert_eq!(mid_write, 3);

    // A new process lists every stored file, once.
    let stored = files(&ctx.root);
    assert!(stored.len() >= 3, "the odd rounds each stored a file");
    let client = ctx.client().await;
    let listed = client
        .list_resources(Some(PaginatedRequestParams::default()))
        .await
        .unwrap()
        .resources;
    let mut paths: Vec<PathBuf> = listed
        .iter()
        .map(|r| PathBuf::from(r.uri.strip_prefix("file://").unwrap()))
        .collect();
    paths.sort();
    assert_eq!(
        paths, stored,
        "the records index lists each stored file once"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_batch_run_killed_midway_says_which_batches_reached_the_upstream() {
    let ctx = TestContext::new();
    // In a root: Offload is killed below, before it could link back a file its server saved
    // through a private folder (that happens at its next start).
    let received = ctx.root.join("received.jsonl");
    let received_arg = received.display().to_string();
    ctx.write_servers(json!({"fx": TestContext::fixture(&["--received-log", &received_arg])}));
    let mut csv = String::from("id,name\n");
    for i in 0..200_000 {
        csv.push_str(&format!("{i},user {i}\n"));
    }
    std::fs::write(ctx.root.join("users.csv"), csv).unwrap();

    let mut wire = Wire::start(&ctx).await;
    let args = json!({"server": "fx", "tool_name": "received", "file_path": "users.csv",
                      "data_key": "rows", "batch_size": 1000});
    wire.call(1, "call_tool_with_file_content", args, Some("run"))
        .await;
    // Progress says each batch as it is sent; kill after the fifth.
    loop {
        let message = wire.next().await;
        assert_ne!(
            message["id"], 1,
            "the run ended before it could be cut: {message}"
        );
        if message["params"]["progressToken"] == "run"
            && message["params"]["progress"].as_f64() >= Some(5000.0)
        {
            assert!(
                message["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("batch 5:")),
                "{message}"
            );
            break;
        }
    }
    wire.kill().await;

    // What Offload recorded as sent, batch by batch, in order, from the first.
    let audit = ctx.home.join(".local/share/offload/audit.jsonl");
    let parts: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "batch_part")
        .collect();
    assert!(parts.len() >= 5, "{} batches recorded", parts.len());
    let arrived: Vec<Value> = std::fs::read_to_string(&received)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let n = i as u64;
        assert_eq!(part["batches"], n + 1);
        assert_eq!(part["first_item"], n * 1000);
        assert_eq!(part["rows"], 1000);
        assert_eq!(part["outcome"], "ok");
        assert_eq!(part["file"], "users.csv");
        // Every batch recorded as sent did reach the upstream, with the right rows.
        assert_eq!(arrived[i]["rows"], 1000);
        assert_eq!(arrived[i]["first"]["id"], n * 1000);
    }
    // At most the batch in flight when the process died arrived without a record.
    assert!(
        arrived.len() <= parts.len() + 1,
        "{} arrived",
        arrived.len()
    );
    assert!(parts.len() < 200, "the run was cut short");
}
