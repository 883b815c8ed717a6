//! Confinement as a new user meets it: a hand-written configuration stays confined with the
//! network off, and a start refused by confinement says what was refused and how to allow it.

use serde_json::json;

/// A new user pastes a server into a hand-written configuration: `offload doctor` says it is
/// confined with the network off, before Offload first ran and after (the one-time upgrade of
/// servers from before confinement is for files an earlier Offload ran with, not this one), and
/// the file is left as the user wrote it.
#[tokio::test]
async fn a_new_users_hand_written_servers_stay_confined_with_the_network_off() {
    let ctx = offload_testkit::TestContext::new();
    let written = serde_json::to_string_pretty(&json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": offload_testkit::TestContext::fixture(&[])},
    }))
    .unwrap();
    std::fs::write(&ctx.config_path, &written).unwrap();
    let config = ctx.config_path.to_str().unwrap().to_owned();
    let servers_line = || {
        let out = ctx.run_offload(&["doctor", "--config", &config]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        said.lines()
            .find(|l| l.starts_with("servers"))
            .unwrap_or_else(|| panic!("no servers line: {said}"))
            .to_owned()
    };
    assert!(servers_line().ends_with("1 confined"), "{}", servers_line());
    let client = ctx.client().await;
    let r = offload_testkit::call(&client, "fx__echo", json!({"text": "hi"})).await;
    assert_eq!(offload_testkit::text(&r), "hi");
    client.cancel().await.unwrap();
    let after = servers_line();
    assert!(after.ends_with("1 confined"), "{after}");
    assert_eq!(std::fs::read_to_string(&ctx.config_path).unwrap(), written);
}

/// A confined server that fails to start because it was refused a path says so: the error names
/// the path and the `sandbox` change that allows it. The control: the same server reading a
/// file in an allowed directory gets no such advice.
#[tokio::test]
async fn a_start_refused_by_confinement_says_what_was_refused_and_how_to_allow_it() {
    let ctx = offload_testkit::TestContext::new();
    let outside = ctx.work.join("settings.txt");
    let inside = ctx.root.join("settings.txt");
    for f in [&outside, &inside] {
        std::fs::write(f, "setting=1\n").unwrap();
    }
    let reader = |file: &std::path::Path| json!({"command": "sh", "args": ["-c", format!("cat {} >&2; exit 1", file.display())]});
    std::fs::write(
        &ctx.config_path,
        json!({
            "roots": [ctx.root],
            "tools": {"expose": "meta"},
            "mcpServers": {"refused": reader(&outside), "allowed": reader(&inside)},
        })
        .to_string(),
    )
    .unwrap();
    let client = ctx.client().await;
    let r = offload_testkit::call(&client, "list_available_tools", json!({})).await;
    let servers = offload_testkit::structured(&r)["servers"].clone();
    let error = |name: &str| {
        servers
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .and_then(|s| s["error"].as_str())
            .unwrap_or_else(|| panic!("{name} failed: {servers}"))
            .to_owned()
    };
    let refused = error("refused");
    assert!(
        refused.contains(&format!(
            "it was refused {}: to allow it, add \"sandbox\": {{\"read\": [\"{}\"]}}",
            outside.display(),
            outside.display()
        )),
        "{refused}"
    );
    let allowed = error("allowed");
    assert!(
        allowed.contains("setting=1"),
        "the control read it: {allowed}"
    );
    assert!(!allowed.contains("confines"), "{allowed}");
    client.cancel().await.unwrap();
}

/// Waits up to 10 s for `file` to exist and hold `text`.
fn eventually_holds(file: &std::path::Path, text: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = std::fs::read(file)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        if now.contains(text) || std::time::Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Published servers that save a file the user named in the home folder, as their READMEs
/// configure them, in a new user's default configuration (the home folder not a root):
/// server-memory with `MEMORY_FILE_PATH` (it saves by a temporary file renamed over the file)
/// and mcp-server-sqlite with `--db-path` (a file it creates, a journal beside it). Both save
/// where the user named the file, across a restart, and nothing else in the home folder is
/// touched. On the main before private folders, the first failed with `EACCES` on its
/// temporary file and the second could not open its database.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn servers_save_files_named_in_the_home_folder_and_touch_nothing_else_there() {
    use offload_testkit::{call, interop_dir, text};
    let ctx = offload_testkit::TestContext::new();
    std::fs::write(ctx.home.join("notes.txt"), "mine").unwrap();
    let memory_file = ctx.home.join("memory.jsonl");
    let db = ctx.home.join("test.db");
    let mut memory = crate::published::node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": memory_file});
    let sqlite = json!({
        "command": interop_dir().join(".venv-legacy/bin/mcp-server-sqlite"),
        "args": ["--db-path", db],
    });
    std::fs::write(
        &ctx.config_path,
        serde_json::to_string_pretty(&json!({
            "roots": [ctx.root],
            "mcpServers": {"memory": memory, "sqlite": sqlite},
        }))
        .unwrap(),
    )
    .unwrap();
    // The home folder's entries but Offload's own data (`.local/share/offload`).
    let entries = || {
        let mut names: Vec<String> = std::fs::read_dir(&ctx.home)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".local")
            .collect();
        names.sort();
        names
    };
    let before = entries();
    let client = ctx.client().await;
    let r = call(
        &client,
        "memory__create_entities",
        json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}),
    )
    .await;
    assert!(text(&r).contains("Ada"), "{}\n{}", text(&r), ctx.log());
    let saved = eventually_holds(&memory_file, "first program");
    assert!(saved.contains("first program"), "{saved:?}\n{}", ctx.log());
    for (tool, query) in [
        ("create_table", "CREATE TABLE notes (body TEXT)"),
        ("write_query", "INSERT INTO notes VALUES ('kept')"),
    ] {
        let r = call(&client, &format!("sqlite__{tool}"), json!({"query": query})).await;
        assert_ne!(
            r.is_error,
            Some(true),
            "{tool}: {}\n{}",
            text(&r),
            ctx.log()
        );
    }
    let r = call(
        &client,
        "sqlite__read_query",
        json!({"query": "SELECT body FROM notes"}),
    )
    .await;
    assert!(text(&r).contains("kept"), "{}", text(&r));
    client.cancel().await.unwrap();
    // The user's database, read by another program.
    eventually_holds(&db, "notes");
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT body FROM notes').fetchall())",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "[('kept',)]",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing else in the home folder changed.
    assert_eq!(
        std::fs::read_to_string(ctx.home.join("notes.txt")).unwrap(),
        "mine"
    );
    let mut expected = before.clone();
    expected.extend(["memory.jsonl".to_owned(), "test.db".to_owned()]);
    expected.sort();
    assert_eq!(entries(), expected);
    // A restart reads what was saved.
    let client = ctx.client().await;
    let r = call(&client, "memory__read_graph", json!({})).await;
    assert!(text(&r).contains("first program"), "{}", text(&r));
    let r = call(
        &client,
        "sqlite__read_query",
        json!({"query": "SELECT count(*) AS n FROM notes"}),
    )
    .await;
    assert!(text(&r).contains('1'), "{}", text(&r));
    client.cancel().await.unwrap();
}

/// A confined server's call that fails because of a refusal says so: a path its own stderr
/// says it could not open, and a host its proxy turned away, each with the `sandbox` change
/// that allows it, in the error the model reads. The controls: the same server's call that
/// fails for another reason gets no such advice, and the path allowed as the advice says is
/// read.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_call_refused_by_confinement_says_what_was_refused_and_how_to_allow_it() {
    use offload_testkit::{call, interop_dir, text};
    let ctx = offload_testkit::TestContext::new();
    let server = ctx.work.join("reader.py");
    std::fs::write(
        &server,
        r#"import sys, urllib.request
from mcp.server.mcpserver import MCPServer

app = MCPServer("reader")


@app.tool()
def read(path: str) -> str:
    """Read a file."""
    try:
        return open(path).read()
    except PermissionError as e:
        print(f"PermissionError: {e}", file=sys.stderr, flush=True)
        raise


@app.tool()
def fetch(url: str) -> str:
    """Fetch a URL."""
    return urllib.request.urlopen(url, timeout=5).read().decode()


@app.tool()
def fail() -> str:
    """Fail for a reason of its own."""
    raise ValueError("no such record")


app.run()
"#,
    )
    .unwrap();
    // Not beside the server's script, whose folder it reads.
    let elsewhere = ctx.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let outside = std::fs::canonicalize(&elsewhere)
        .unwrap()
        .join("settings.txt");
    std::fs::write(&outside, "setting=1").unwrap();
    let entry = |sandbox: serde_json::Value| {
        json!({"command": interop_dir().join(".venv/bin/python"), "args": [server],
               "sandbox": sandbox})
    };
    std::fs::write(
        &ctx.config_path,
        json!({
            "roots": [ctx.root],
            "mcpServers": {
                "reader": entry(json!({"network": {"allow": ["localhost:1"]}})),
                "allowed": entry(json!({"read": [outside]})),
            },
        })
        .to_string(),
    )
    .unwrap();
    let client = ctx.client().await;
    let r = call(&client, "reader__read", json!({"path": outside})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains(&format!(
            "it was refused {}: to allow it, add \"sandbox\": {{\"read\": [\"{}\"]}}",
            outside.display(),
            outside.display()
        )),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "reader__fetch",
        json!({"url": "http://127.0.0.1:9/"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains(
            "its network proxy refused 127.0.0.1:9: to allow it, add \"sandbox\": {\"network\": {\"allow\": [\"127.0.0.1:9\"]}}"
        ),
        "{}",
        text(&r)
    );
    // The controls: a failure of its own says nothing of confinement; allowed as the advice
    // says, the path is read.
    let r = call(&client, "reader__fail", json!({})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(!text(&r).contains("confines"), "{}", text(&r));
    let r = call(&client, "allowed__read", json!({"path": outside})).await;
    assert_eq!(text(&r), "setting=1");
    client.cancel().await.unwrap();
}
