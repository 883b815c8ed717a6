//! A client's first minute, as a new user's client has it: it lists once right after
//! `initialize` (no test here waits for servers before its first list), in the default
//! configuration (`auto`, no `tools.expose`) unless a test says otherwise.
//!
//! - First start ever (nothing remembered): `tools/list` waits for servers still starting (up
//!   to `LIST_WAIT`), so a slow server's tools are in the first answer; Offload's own tools
//!   answer meanwhile.
//! - Later starts: every server's tools are listed at once from the remembered catalog, and a
//!   call of a tool whose server is still starting waits for it.
//! - A remembered list that turned out stale is corrected with `list_changed`, and `auto` does
//!   not change mode under the client; a server that fails is visible in direct mode.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, structured, text};
use serde_json::{Value, json};

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn catalog(ctx: &TestContext) -> std::path::PathBuf {
    ctx.home.join(".local/share/offload/catalog.json")
}

async fn until_told(client: &Client, seen: usize, within: Duration) {
    let deadline = Instant::now() + within;
    while client.service().tool_list_changed.load(Ordering::SeqCst) <= seen {
        assert!(Instant::now() < deadline, "no tools/list_changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn slow_config(ctx: &TestContext, delay_ms: &str) -> Value {
    let mut slow = TestContext::fixture(&["--start-delay-ms", delay_ms]);
    slow["startTimeoutSecs"] = json!(30);
    json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[]), "slow": slow},
    })
}

#[tokio::test]
async fn the_first_list_has_every_server_and_own_tools_never_wait() {
    let ctx = TestContext::new();
    ctx.write_config(slow_config(&ctx, "2500"));
    std::fs::write(ctx.root.join("notes.txt"), "one\ntwo\n").unwrap();

    // First start ever: nothing is remembered, so the list waits for the slow server (as a
    // client connected to it directly would), while Offload's own tools answer at once.
    let client = ctx.client().await;
    let asked = Instant::now();
    let (listed, read) = tokio::join!(client.list_all_tools(), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let start = Instant::now();
        let r = call(&client, "read_file", json!({"path": "notes.txt"})).await;
        (r, start.elapsed(), asked.elapsed())
    });
    let took = asked.elapsed();
    let listed = names(&listed.unwrap());
    assert!(listed.contains(&"slow__echo".to_owned()), "{listed:?}");
    assert!(listed.contains(&"fx__echo".to_owned()), "{listed:?}");
    assert!(
        took >= Duration::from_millis(2000) && took < Duration::from_secs(20),
        "the first list waited {took:?}"
    );
    let (r, read_took, read_done) = read;
    assert!(text(&r).contains("two"), "{}", text(&r));
    assert!(
        read_took < Duration::from_millis(1000) && read_done < took,
        "read_file took {read_took:?}, done at {read_done:?}, the list at {took:?}"
    );
    client.cancel().await.unwrap();
    assert!(catalog(&ctx).exists(), "the tools are remembered");

    // Every later start: listed at once from what each server listed last time, the slow
    // server still starting; a call of its tool waits for it.
    for expose in [None, Some("meta")] {
        let client = ctx
            .client_with(&expose.map_or(vec![], |e| vec!["--expose", e]))
            .await;
        let asked = Instant::now();
        let listed = names(&client.list_all_tools().await.unwrap());
        let took = asked.elapsed();
        assert!(took < Duration::from_millis(1000), "{expose:?}: {took:?}");
        if expose.is_none() {
            assert!(listed.contains(&"slow__echo".to_owned()), "{listed:?}");
            let r = call(&client, "slow__echo", json!({"text": "late"})).await;
            assert_eq!(text(&r), "late");
        } else {
            // Meta: the search finds it at once too, and its call waits for it.
            let r = call(
                &client,
                "list_available_tools",
                json!({"query": "echo", "filter_by_server": "slow"}),
            )
            .await;
            assert!(asked.elapsed() < Duration::from_millis(1500));
            assert!(text(&r).contains("slow/echo"), "{}", text(&r));
            let note = structured(&r)["note"].as_str().unwrap_or("").to_owned();
            assert!(!note.contains("not listed yet"), "{note}");
            let r = call(
                &client,
                "call_tool",
                json!({"server": "slow", "tool_name": "echo", "tool_args": {"text": "late"}}),
            )
            .await;
            assert_eq!(text(&r), "late");
        }
        client.cancel().await.unwrap();
    }
}

/// The fixture's tool definitions as a test writes them into a remembered catalog.
fn remembered(ctx: &TestContext, servers: &[(&str, &Value, Vec<Value>)]) {
    let mut all = serde_json::Map::new();
    for (name, entry, tools) in servers {
        all.insert(
            (*name).to_owned(),
            json!({"command": entry["command"], "args": entry["args"], "tools": tools}),
        );
    }
    let path = catalog(ctx);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&json!({"servers": all})).unwrap()).unwrap();
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("{name} (remembered)"), "inputSchema": {"type": "object"}})
}

#[tokio::test]
async fn a_stale_remembered_list_is_corrected_and_auto_keeps_its_mode() {
    let ctx = TestContext::new();
    // How many tools the fixture has (a first start, in meta mode, only to count them).
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let client = ctx.client().await;
    let r = call(&client, "list_available_tools", json!({})).await;
    let fx_tools = structured(&r)["tools"].as_array().unwrap().len();
    client.cancel().await.unwrap();

    // The server "big" was upgraded since it last ran: it remembered two tools, it has 40 more
    // now. Its start takes a second, so the first list comes from what is remembered.
    let fx = TestContext::fixture(&[]);
    let mut big = TestContext::fixture(&["--tools", "40", "--start-delay-ms", "1000"]);
    big["startTimeoutSecs"] = json!(30);
    remembered(
        &ctx,
        &[("big", &big, vec![tool("echo"), tool("retired_tool")])],
    );
    let config = |direct_limit: usize| {
        json!({
            "roots": [ctx.root],
            "tools": {"directLimit": direct_limit},
            "mcpServers": {"fx": fx, "big": big},
        })
    };
    ctx.write_config(config(fx_tools + 5));
    let client = ctx.client().await;
    let first = names(&client.list_all_tools().await.unwrap());
    assert!(first.contains(&"big__retired_tool".to_owned()), "{first:?}");
    assert!(first.contains(&"fx__echo".to_owned()), "{first:?}");

    // big starts and lists 41 tools: the client is told; its list drops the retired tool and
    // stays direct (it was shown tools; `auto` does not switch to meta under it).
    until_told(&client, 0, Duration::from_secs(20)).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let now = loop {
        let now = names(&client.list_all_tools().await.unwrap());
        if !now.contains(&"big__retired_tool".to_owned()) || Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(!now.contains(&"big__retired_tool".to_owned()), "{now:?}");
    assert!(
        now.contains(&"fx__echo".to_owned()),
        "still direct: {now:?}"
    );
    let r = call(&client, "fx__echo", json!({"text": "kept"})).await;
    assert_eq!(text(&r), "kept");
    let r = call(&client, "big__echo", json!({"text": "big"})).await;
    assert_eq!(text(&r), "big");

    // The configuration changes: the mode is decided again and the client told; a tool it was
    // listed stays callable by that name for the session while its server offers it.
    let told = client.service().tool_list_changed.load(Ordering::SeqCst);
    ctx.write_config(config(1));
    until_told(&client, told, Duration::from_secs(20)).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while names(&client.list_all_tools().await.unwrap()).contains(&"fx__echo".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "meta after the configuration changed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = call(&client, "fx__echo", json!({"text": "still"})).await;
    assert_eq!(text(&r), "still");
    client.cancel().await.unwrap();
    ctx.write_config(config(fx_tools + 5));

    // A new session decides from the whole known catalog: meta, at once.
    let client = ctx.client().await;
    let asked = Instant::now();
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(asked.elapsed() < Duration::from_millis(1000));
    assert!(!listed.contains(&"fx__echo".to_owned()), "{listed:?}");
    assert!(listed.contains(&"list_available_tools".to_owned()));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_server_that_fails_is_visible_in_direct_mode_with_its_cause() {
    let ctx = TestContext::new();
    let gate = ctx.root.join("broken");
    let gate_arg = gate.display().to_string();
    let flaky = TestContext::fixture(&["--fail-start-while", &gate_arg]);
    // A Node server whose dependency is missing: its cause is fifteen lines above the end.
    let node_error = "node:internal/modules/esm/resolve:873\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk' imported from /srv/dist/index.js\n    at packageResolve (node:internal/modules/esm/resolve:873:9)\n    at moduleResolve (node:internal/modules/esm/resolve:946:18)\n    at defaultResolve (node:internal/modules/esm/resolve:1188:11)\n    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:642:12)\n    at ModuleLoader.resolve (node:internal/modules/esm/loader:574:38) {\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n";
    let script = ctx.root.join("node_error.txt");
    std::fs::write(&script, node_error).unwrap();
    let node =
        json!({"command": "sh", "args": ["-c", format!("cat {} >&2; exit 1", script.display())]});
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[]), "flaky": flaky, "node": node},
    }));

    // First run: flaky starts and its tools are remembered; node never starts, and direct mode
    // lists the tool that says why.
    let client = ctx.client().await;
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(listed.contains(&"flaky__echo".to_owned()), "{listed:?}");
    assert!(
        listed.contains(&"list_available_tools".to_owned()),
        "a failing server's status is reachable in direct mode: {listed:?}"
    );
    let r = call(
        &client,
        "list_available_tools",
        json!({"filter_by_server": "node"}),
    )
    .await;
    let server = &structured(&r)["servers"][0];
    assert_eq!(server["status"], "error", "{server}");
    let error = server["error"].as_str().unwrap();
    assert!(
        error.contains(
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk'"
        ),
        "{error}"
    );
    assert!(
        !error.contains(" at ") && !error.contains("throw new"),
        "no stack frames: {error}"
    );
    client.cancel().await.unwrap();

    // Now flaky cannot start: its remembered tools are listed, and a call says why.
    std::fs::write(&gate, "").unwrap();
    let client = ctx.client().await;
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(listed.contains(&"flaky__echo".to_owned()), "{listed:?}");
    let r = call(&client, "flaky__echo", json!({"text": "x"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Error [server_unavailable]")
            && text(&r).contains("refusing to start while"),
        "the cause: {}",
        text(&r)
    );
    let r = call(&client, "fx__echo", json!({"text": "healthy"})).await;
    assert_eq!(text(&r), "healthy");
    client.cancel().await.unwrap();
}

/// What is remembered is only for starts: a running server whose list changed is listed as it
/// lists now. (The change here is a "rug pull", so the list it replaces must not come back,
/// not even while the server takes its time to list again.)
#[tokio::test]
async fn a_running_servers_changed_list_is_never_answered_from_memory() {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "direct"},
        "mcpServers": {"fx": TestContext::fixture(&["--changed-list-delay-ms", "1500"])},
    }));
    let client = ctx.client().await;
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(listed.contains(&"fx__echo".to_owned()), "{listed:?}");
    let r = call(&client, "fx__echo", json!({"text": "approved"})).await;
    assert_eq!(text(&r), "approved");

    // The server changes echo and says its list changed; a call in the window before its new
    // list is held (it waits for the list), and so is every call after.
    let told = client.service().tool_list_changed.load(Ordering::SeqCst);
    call(&client, "fx__change_echo", json!({})).await;
    let r = call(&client, "fx__echo", json!({"text": "in the window"})).await;
    assert!(text(&r).starts_with("Error [tool_changed]"), "{}", text(&r));
    until_told(&client, told, Duration::from_secs(20)).await;
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(
        !listed.contains(&"fx__echo".to_owned()),
        "the changed echo is held, not listed as remembered: {listed:?}"
    );
    assert!(listed.contains(&"fx__change_echo".to_owned()), "{listed:?}");
    let r = call(&client, "fx__echo", json!({"text": "x"})).await;
    assert!(text(&r).starts_with("Error [tool_changed]"), "{}", text(&r));
    client.cancel().await.unwrap();
}
