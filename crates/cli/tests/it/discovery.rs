use offload_testkit::{TestContext, call, error_code, structured, text};
use serde_json::json;

use crate::with_fixture;

#[tokio::test]
async fn offers_the_contract_tools_with_titles_schemas_and_annotations() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_allowed_directories",
            "list_available_tools",
            "list_tool_details",
            "call_tool",
            "call_tool_and_store",
            "call_tool_with_file_content",
            "get_file_schema",
            "summarize_file",
            "read_file",
            "query_file",
            "run_script"
        ]
    );
    for t in &tools {
        assert!(t.title.is_some(), "{}", t.name);
        assert!(t.annotations.is_some(), "{}", t.name);
    }
    // The file tools only read, and say so; they may reach the URLs the user allows.
    for name in ["get_file_schema", "summarize_file", "read_file"] {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        let a = t.annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.open_world_hint),
            (Some(true), Some(true)),
            "{name}"
        );
        assert!(t.output_schema.is_some(), "{name}");
        assert!(
            t.input_schema["required"]
                .as_array()
                .unwrap()
                .contains(&json!("path"))
        );
    }
    let call_tool = tools.iter().find(|t| t.name == "call_tool").unwrap();
    assert_eq!(
        call_tool.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let required = call_tool.input_schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("server")) && required.contains(&json!("tool_name")));
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "offload");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn lists_allowed_directories_canonical_with_the_default() {
    let ctx = TestContext::new();
    let ro = ctx.tmp.path().join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    ctx.write_config(json!({"roots": [ctx.root, {"path": ro, "writable": false}]}));
    let client = ctx.client().await;
    let r = call(&client, "list_allowed_directories", json!({})).await;
    let s = structured(&r);
    let root = ctx.root.display().to_string();
    assert_eq!(s["default_directory"], json!(root));
    assert_eq!(
        s["directories"][0],
        json!({"path": root, "writable": true, "default": true})
    );
    assert_eq!(s["directories"][1]["writable"], json!(false));
    assert!(text(&r).contains("read-only"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn lists_every_server_in_parallel_and_one_broken_server_hides_nothing() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "paged": TestContext::fixture(&["--tools", "60", "--page-size", "25"]),
        "broken": {"command": "offload-no-such-command-xyz"},
        "off": {"command": "offload-no-such-command-xyz", "disabled": true},
    }));
    let client = ctx.client().await;
    let r = call(&client, "list_available_tools", json!({})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    let servers = s["servers"].as_array().unwrap();
    let by = |n: &str| servers.iter().find(|x| x["name"] == n).unwrap().clone();
    assert_eq!(by("fx")["status"], "ready");
    assert_eq!(by("fx")["tool_count"], 16);
    assert_eq!(by("paged")["tool_count"], 76, "cursors followed to the end");
    assert_eq!(by("broken")["status"], "error");
    assert!(
        by("broken")["error"]
            .as_str()
            .unwrap()
            .contains("offload-no-such-command-xyz")
    );
    assert_eq!(by("off")["status"], "disabled");
    let tools = s["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 92);
    assert!(
        tools[0].get("inputSchema").is_none(),
        "short list has no schemas"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn query_ranks_best_matches_first_and_filter_limits_to_one_server() {
    let ctx = TestContext::new();
    ctx.write_servers(
        json!({"fx": TestContext::fixture(&[]), "paged": TestContext::fixture(&["--tools", "5"])}),
    );
    let client = ctx.client().await;
    let r = call(&client, "list_available_tools", json!({"query": "COUNTER"})).await;
    let tools = structured(&r)["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert!(tools.iter().all(|t| t["tool"] == "counter"));

    let r = call(
        &client,
        "list_available_tools",
        json!({"filter_by_server": "fx", "detailed": true}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["servers"].as_array().unwrap().len(), 1);
    assert!(s["tools"][0]["inputSchema"].is_object());

    let r = call(
        &client,
        "list_available_tools",
        json!({"filter_by_server": "fz"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_server");
    assert!(text(&r).contains("'fx'"), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tool_details_and_closest_names_for_typos() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = call(
        &client,
        "list_tool_details",
        json!({"server": "fx", "tool_name": "echo"}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["tool"], "echo");
    assert_eq!(s["inputSchema"]["required"], json!(["text"]));
    // As a script calls it.
    let declared = s["typescript"].as_str().unwrap();
    assert!(
        declared.ends_with("tools.fx.echo(args: { text: string }): Promise<unknown>;"),
        "{declared}"
    );

    let r = call(
        &client,
        "list_tool_details",
        json!({"server": "fx", "tool_name": "ecko"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_tool");
    assert_eq!(structured(&r)["error"]["suggestions"][0], "echo");

    let r = call(
        &client,
        "list_tool_details",
        json!({"server": "f", "tool_name": "echo"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_server");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tool_list_is_refreshed_after_list_changed() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = call(
        &client,
        "list_tool_details",
        json!({"server": "fx", "tool_name": "extra"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_tool");
    call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "toggle_extra"}),
    )
    .await;
    // The notification travels upstream → Offload; give it a moment.
    let mut found = false;
    for _ in 0..50 {
        let r = call(
            &client,
            "list_tool_details",
            json!({"server": "fx", "tool_name": "extra"}),
        )
        .await;
        if r.is_error != Some(true) {
            found = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(found, "the cached tool list was not refreshed");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn malformed_requests_are_invalid_params_errors() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    for (name, args) in [
        ("call_tool", json!({"tool_name": "echo"})),
        ("call_tool", json!({"server": 3, "tool_name": "echo"})),
        (
            "call_tool",
            json!({"server": "fx", "tool_name": "echo", "tool_args": [1]}),
        ),
        ("list_available_tools", json!({"detailed": "yes"})),
        ("list_available_tools", json!({"filter_server": "fx"})),
        ("no_such_tool", json!({})),
    ] {
        let serde_json::Value::Object(args) = args else {
            unreachable!()
        };
        let mut params = rmcp::model::CallToolRequestParams::new(name);
        params.arguments = Some(args);
        match client.call_tool(params).await {
            Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{name}: {e:?}"),
            other => panic!("{name}: expected -32602, got {other:?}"),
        }
    }
    client.cancel().await.unwrap();
}

/// Offload's own tool definitions cost a model context on every turn: name, description and
/// input schema of all ten stay within 6,000 bytes (about 1,500 tokens; it was 9,198), the
/// whole `tools/list` within 10,000 (it was 14,489).
#[tokio::test]
async fn our_own_tool_list_is_small() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let tools = client.list_all_tools().await.unwrap();
    let core: usize = tools
        .iter()
        .map(|t| {
            serde_json::to_string(&json!({
                "name": t.name, "description": t.description, "inputSchema": t.input_schema
            }))
            .unwrap()
            .len()
        })
        .sum();
    let whole = serde_json::to_string(&json!({"tools": tools}))
        .unwrap()
        .len();
    let mut rows: Vec<String> = tools
        .iter()
        .map(|t| {
            let size = |v: &serde_json::Value| serde_json::to_string(v).unwrap().len();
            format!(
                "{:<30} description {:>4}  input {:>4}  output {:>5}",
                t.name,
                t.description.as_deref().unwrap_or("").len(),
                size(&json!(t.input_schema)),
                t.output_schema.as_ref().map_or(0, |s| size(&json!(s)))
            )
        })
        .collect();
    rows.push(format!(
        "name + description + input schema: {core} bytes (limit 7000); whole tools/list: {whole} bytes (limit 11500)"
    ));
    eprintln!("{}", rows.join("\n"));
    // The contract's limits are 8,000 and 14,000 bytes; these hold the eleven tools tighter.
    assert!(core <= 7000, "{}", rows.join("\n"));
    assert!(whole <= 11500, "{}", rows.join("\n"));
    client.cancel().await.unwrap();
}
