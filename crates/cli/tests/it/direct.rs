//! Direct mode: upstream tools listed as tools of the client's own (`<server>__<tool>`), called
//! with Offload's powers ($file, big answers stored), per-tool control, pinned definitions held
//! until approved, and `tools/list_changed` when the listed set changes.

use std::time::Duration;

use offload_testkit::{Client, TestContext, call, error_code, structured, text};
use serde_json::{Value, json};

fn direct_config(ctx: &TestContext, fx: Value, tools: Value) {
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {"fx": fx}, "tools": tools}));
}

async fn names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test]
async fn upstream_tools_are_listed_and_called_directly_with_offloads_powers() {
    let ctx = TestContext::new();
    direct_config(&ctx, TestContext::fixture(&[]), json!({"expose": "direct"}));
    let client = ctx.client().await;
    let tools = client.list_all_tools().await.unwrap();
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        listed.contains(&"fx__echo") && listed.contains(&"fx__large"),
        "{listed:?}"
    );
    assert!(listed.contains(&"get_file_schema") && listed.contains(&"call_tool_and_store"));
    for hidden in ["list_available_tools", "list_tool_details"] {
        assert!(
            !listed.contains(&hidden),
            "{hidden} is not listed in direct mode"
        );
    }
    // call_tool is: a client that checks answers against output schemas (the Python SDK)
    // lists the tools again before each call of a tool it was not shown.
    assert!(listed.contains(&"call_tool"), "{listed:?}");
    let echo = tools.iter().find(|t| t.name == "fx__echo").unwrap();
    assert_eq!(
        echo.description.as_deref(),
        Some("Echo the given text back.")
    );
    assert_eq!(
        echo.input_schema["required"],
        json!(["text"]),
        "the upstream's schema"
    );

    let r = call(&client, "fx__echo", json!({"text": "directly"})).await;
    assert_eq!(text(&r), "directly");
    std::fs::write(ctx.root.join("note.txt"), "from a file").unwrap();
    let r = call(&client, "fx__echo", json!({"text": {"$file": "note.txt"}})).await;
    assert_eq!(text(&r), "from a file", "$file in a direct call");
    let r = call(&client, "fx__large", json!({"bytes": 300_000})).await;
    assert!(
        text(&r).contains("larger than the inline budget"),
        "{}",
        text(&r)
    );
    let path = structured(&r)["path"].as_str().unwrap().to_owned();
    assert!(
        std::fs::metadata(&path).unwrap().len() >= 300_000,
        "stored whole"
    );
    let r = call(&client, "fx__fail", json!({"message": "upstream says no"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("upstream says no"),
        "isError passes through"
    );

    // Calls are in the audit log as `direct`, with the server and the upstream tool.
    let audit = std::fs::read_to_string(ctx.home.join(".local/share/offload/audit.jsonl")).unwrap();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("\"kind\":\"direct\"") && l.contains("\"upstream_tool\":\"echo\"")),
        "{audit}"
    );
    // call_tool answers in direct mode too.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "meta too"}}),
    )
    .await;
    assert_eq!(text(&r), "meta too");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn auto_lists_tools_directly_up_to_the_limit_and_a_client_can_choose() {
    let ctx = TestContext::new();
    direct_config(&ctx, TestContext::fixture(&[]), json!({"directLimit": 5}));
    let client = ctx.client().await;
    let listed = names(&client).await;
    assert!(
        listed.contains(&"list_available_tools".to_owned())
            && !listed.iter().any(|n| n.starts_with("fx__")),
        "over the limit: meta ({listed:?})"
    );
    client.cancel().await.unwrap();
    let client = ctx.client_with(&["--expose", "direct"]).await;
    assert!(
        names(&client).await.contains(&"fx__echo".to_owned()),
        "--expose direct for this client"
    );
    client.cancel().await.unwrap();

    direct_config(&ctx, TestContext::fixture(&[]), json!({"directLimit": 40}));
    let client = ctx.client().await;
    assert!(
        names(&client).await.contains(&"fx__echo".to_owned()),
        "within the limit: direct"
    );
    client.cancel().await.unwrap();
    let client = ctx.client_with(&["--expose", "meta"]).await;
    assert_eq!(
        names(&client).await.len(),
        11,
        "--expose meta: Offload's eleven tools"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn disabled_tools_are_neither_listed_nor_callable_and_prefixes_name_tools() {
    let ctx = TestContext::new();
    let mut fx = TestContext::fixture(&[]);
    fx["disabledTools"] = json!(["counter"]);
    fx["prefix"] = json!(false);
    direct_config(&ctx, fx, json!({"expose": "direct"}));
    let client = ctx.client().await;
    let listed = names(&client).await;
    assert!(
        listed.contains(&"echo".to_owned()),
        "prefix false: the upstream's own names ({listed:?})"
    );
    assert!(!listed.contains(&"counter".to_owned()));
    let e = client
        .call_tool(rmcp::model::CallToolRequestParams::new("counter"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("unknown tool"), "{e}");
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "counter"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_tool");
    assert!(text(&r).contains("turned off"), "{}", text(&r));
    client.cancel().await.unwrap();
}

/// `offload tools list` is a command a person runs once: it shows the tools of a server slow
/// to start (2.5 s here, desktop-commander takes 4) and the ones held, not only what was ready
/// within a model's first look (before: the server listed nothing, and nothing was held).
#[tokio::test]
async fn tools_list_waits_for_a_slow_server_and_shows_what_is_held() {
    let ctx = TestContext::new();
    let flag = ctx.root.join("echo-changed");
    direct_config(
        &ctx,
        TestContext::fixture(&[
            "--echo-changed-file",
            flag.to_str().unwrap(),
            "--start-delay-ms",
            "2500",
        ]),
        json!({}),
    );
    let list = || {
        let out = ctx.run_offload(&["tools", "list"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = list();
    assert!(first.contains("fx__echo  (fx/echo)"), "{first}");
    std::fs::write(&flag, "").unwrap();
    let second = list();
    assert!(
        second.contains("held: fx/echo (changed: description)"),
        "{second}"
    );
}

#[tokio::test]
async fn a_changed_definition_is_held_until_approved_and_clients_are_told() {
    let ctx = TestContext::new();
    let flag = ctx.root.join("echo-changed");
    direct_config(
        &ctx,
        TestContext::fixture(&["--echo-changed-file", flag.to_str().unwrap()]),
        json!({"expose": "direct"}),
    );
    let client = ctx.client().await;
    assert!(names(&client).await.contains(&"fx__echo".to_owned()));
    let before = client
        .service()
        .tool_list_changed
        .load(std::sync::atomic::Ordering::SeqCst);
    // The server changes echo's description (and says its tools changed).
    call(&client, "fx__change_echo", json!({})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while client
        .service()
        .tool_list_changed
        .load(std::sync::atomic::Ordering::SeqCst)
        == before
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no tools/list_changed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = names(&client).await;
    assert!(
        !listed.contains(&"fx__echo".to_owned()),
        "held: not listed ({listed:?})"
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_eq!(error_code(&r), "tool_changed", "{}", text(&r));
    // Called by the name it was listed under, the model is told the same (not "unknown tool"),
    // so it knows to ask the user.
    let params = rmcp::model::CallToolRequestParams::new("fx__echo")
        .with_arguments(json!({"text": "x"}).as_object().unwrap().clone());
    let r = client
        .call_tool(params)
        .await
        .expect("a held tool answers with a tool error, not a protocol error");
    assert_eq!(error_code(&r), "tool_changed", "{}", text(&r));
    assert!(text(&r).contains("tell the user"), "{}", text(&r));

    // `offload tools list` shows it held, with what changed; `approve` releases it.
    let offload = |args: &[&str]| ctx.run_offload(args);
    let out = offload(&["tools", "list"]);
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        listing.contains("held: fx/echo (changed: description)"),
        "{listing}"
    );
    assert!(listing.contains("mode: direct"), "{listing}");
    let out = offload(&["tools", "approve", "fx", "echo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("approved 1"));
    // Approved (in another process): listed and callable again here, with the new text.
    let tools = client.list_all_tools().await.unwrap();
    let echo = tools
        .iter()
        .find(|t| t.name == "fx__echo")
        .expect("listed again");
    assert!(echo.description.as_deref().unwrap().contains("id_rsa"));
    let r = call(&client, "fx__echo", json!({"text": "approved"})).await;
    assert_eq!(text(&r), "approved");
    client.cancel().await.unwrap();
}
