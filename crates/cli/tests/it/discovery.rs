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
        // read_file's page reaches a model once, as text: it declares no output schema (a
        // client that shows structured content would show the page as escaped JSON).
        assert_eq!(t.output_schema.is_some(), name != "read_file", "{name}");
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

/// A search among a thousand real tools (BFCL's functions, served by the fixture) answers the
/// best five within 1,500 bytes, each with a confidence, best first; `limit` shows up to 20;
/// an exact name comes first for sure; when no tool has a word of the request, guesses by
/// meaning and the servers' names, not every tool.
#[tokio::test]
async fn a_search_among_a_thousand_tools_answers_the_best_five_within_1500_bytes() {
    let ctx = TestContext::new();
    let (set, catalog) = bfcl();
    ctx.write_servers(json!({
        "bfcl": ctx.fixture_serving(&catalog),
        "fx": TestContext::fixture(&[]),
    }));
    let client = ctx.client().await;
    let queries = set["queries"].as_array().unwrap();
    let mut largest = 0;
    for q in queries.iter().step_by(97) {
        let r = call(&client, "list_available_tools", json!({"query": q["q"]})).await;
        let bytes = serde_json::to_string(&r).unwrap().len();
        largest = largest.max(bytes);
        assert!(
            bytes <= 1500,
            "{bytes} bytes for {}: {}",
            q["q"],
            serde_json::to_string(&r).unwrap()
        );
        let tools = structured(&r)["tools"].as_array().unwrap().clone();
        assert!(tools.len() <= 5, "{tools:?}");
        // (A request in Thai finds nothing among English descriptions, and says so.)
        if q["q"].as_str().unwrap().is_ascii() {
            assert!(!tools.is_empty(), "{}", q["q"]);
        } else if tools.is_empty() {
            continue;
        }
        let confidence: Vec<f64> = tools
            .iter()
            .map(|t| t["confidence"].as_f64().unwrap())
            .collect();
        assert!(
            confidence.iter().all(|c| *c > 0.0 && *c <= 1.0),
            "{confidence:?}"
        );
        assert!(text(&r).contains(&format!(
            "{}/{}",
            tools[0]["server"].as_str().unwrap(),
            tools[0]["tool"].as_str().unwrap()
        )));
    }
    eprintln!("largest default search answer: {largest} bytes");

    let r = call(
        &client,
        "list_available_tools",
        json!({"query": "get the weather", "limit": 20}),
    )
    .await;
    let tools = structured(&r)["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 20);
    let scores: Vec<f64> = tools
        .iter()
        .map(|t| t["confidence"].as_f64().unwrap())
        .collect();
    assert!(
        structured(&r)["matched"].as_u64().unwrap() > 20,
        "{}",
        text(&r)
    );
    assert!(text(&r).starts_with("the 20 best of"), "{}", text(&r));
    assert!(scores[0] >= scores[19]);
    let r = call(
        &client,
        "list_available_tools",
        json!({"query": "weather", "limit": 21}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments");

    for name in ["fx__echo", "fx/echo", "echo"] {
        let r = call(&client, "list_available_tools", json!({"query": name})).await;
        let first = &structured(&r)["tools"][0];
        assert_eq!(
            (first["server"].as_str(), first["tool"].as_str()),
            (Some("fx"), Some("echo")),
            "{name}"
        );
        assert_eq!(first["confidence"], 1.0);
    }

    let r = call(
        &client,
        "list_available_tools",
        json!({"query": "zzqx vvqy"}),
    )
    .await;
    let s = structured(&r);
    // No tool has these words: at most guesses by meaning, unsure, and the servers' counts.
    assert_eq!(s["matched"], 0);
    let guesses = s["tools"].as_array().unwrap();
    assert!(guesses.len() <= 5);
    assert!(
        guesses
            .iter()
            .all(|t| t["confidence"].as_f64().unwrap() < 0.5),
        "{guesses:?}"
    );
    let note = s["note"].as_str().unwrap();
    assert!(
        note.contains("bfcl (1096 tools)") && note.contains("fx ("),
        "{note}"
    );
    assert!(serde_json::to_string(&r).unwrap().len() <= 1500);
    client.cancel().await.unwrap();
}

/// BFCL's 1,096 functions (the search bench's set) as MCP tool definitions, and the set.
fn bfcl() -> (serde_json::Value, Vec<serde_json::Value>) {
    use std::io::Read;
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/data/search/bfcl.json.gz");
    let mut raw = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data).unwrap())
        .read_to_string(&mut raw)
        .unwrap();
    let set: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let catalog = set["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let params: Vec<(String, String)> =
                serde_json::from_value(t["params"].clone()).unwrap();
            offload_testkit::tool_definition(
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
                &params,
            )
        })
        .collect();
    (set, catalog)
}

/// The default configuration (`auto`, no `tools` section) with a thousand tools, walked as a
/// model walks it: the client's tool list is Offload's few tools, not a thousand; a search in
/// the model's words finds the tool; `call_tool` calls it and the upstream's answer comes back.
#[tokio::test]
async fn in_the_default_mode_a_thousand_tools_are_searched_then_called() {
    let ctx = TestContext::new();
    let (_, catalog) = bfcl();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"bfcl": ctx.fixture_serving(&catalog)},
    }));
    let client = ctx.client().await;
    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"list_available_tools") && names.contains(&"call_tool"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.starts_with("bfcl__")), "{names:?}");
    let bytes = serde_json::to_string(&listed).unwrap().len();
    assert!(bytes < 16_000, "the tool list is {bytes} bytes");

    let r = call(
        &client,
        "list_available_tools",
        json!({"query": "What's the weather like in Boston right now?"}),
    )
    .await;
    assert!(serde_json::to_string(&r).unwrap().len() <= 1500);
    let first = structured(&r)["tools"][0].clone();
    let tool = first["tool"].as_str().unwrap();
    assert_eq!(first["server"], "bfcl");
    assert!(tool.contains("weather"), "{}", text(&r));

    let r = call(
        &client,
        "call_tool",
        json!({"server": "bfcl", "tool_name": tool, "tool_args": {"location": "Boston, MA"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let answer: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(answer["tool"], tool);
    assert_eq!(answer["arguments"]["location"], "Boston, MA");
    client.cancel().await.unwrap();
}

/// What each mode costs, as the app and `offload tools list` show it, is the bytes a real
/// client receives: the same catalog listed through `offload mcp --expose direct` and `meta`.
#[tokio::test]
async fn the_cost_shown_for_each_mode_is_what_a_client_receives() {
    let ctx = TestContext::new();
    let (_, catalog) = bfcl();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"bfcl": ctx.fixture_serving(&catalog[..200]), "fx": TestContext::fixture(&[])},
    }));
    let out = ctx.run_offload(&["tools", "list"]);
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = |mode: &str| -> (usize, usize) {
        let line = listing
            .lines()
            .find(|l| l.starts_with("tool list"))
            .unwrap();
        let part = line.split(&format!("{mode} ")).nth(1).unwrap();
        let numbers: Vec<usize> = part
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .take(2)
            .collect();
        (numbers[0], numbers[1])
    };
    for mode in ["direct", "meta"] {
        let client = ctx.client_with(&["--expose", mode]).await;
        let tools = client.list_all_tools().await.unwrap();
        let received = (tools.len(), serde_json::to_vec(&tools).unwrap().len());
        assert_eq!(shown(mode), received, "{mode}: {listing}");
        client.cancel().await.unwrap();
    }
    // Two hundred tools listed directly cost far more than the search that replaces them.
    assert!(shown("direct").1 > 4 * shown("meta").1, "{listing}");
    assert!(listing.starts_with("mode: meta (auto"), "{listing}");
}
