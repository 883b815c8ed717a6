use std::sync::atomic::Ordering;

use offload_testkit::{call, error_code, structured, text};
use serde_json::{Value, json};

use crate::{fx, with_fixture};

pub(crate) async fn with_file(
    client: &offload_testkit::Client,
    args: Value,
) -> rmcp::model::CallToolResult {
    let mut a = json!({"server": "fx", "tool_name": "received"});
    for (k, v) in args.as_object().unwrap() {
        a[k] = v.clone();
    }
    call(client, "call_tool_with_file_content", a).await
}

#[tokio::test]
async fn a_csv_arrives_typed_at_the_data_key_and_the_model_never_sees_it() {
    let ctx = with_fixture();
    std::fs::write(
        ctx.root.join("users.csv"),
        "\u{feff}id,name,zip,active,score,note\r\n1,\"Smith, J\",00123,true,4.5,\r\n2,Lee,90210,false,3,\"multi\nline\"\r\n",
    )
    .unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "users.csv", "data_key": "rows", "tool_args": {"table": "users"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    assert_eq!(s["rows"], 2);
    assert_eq!(s["keys"], json!(["table", "rows"]));
    assert_eq!(
        s["first"],
        json!({"id": 1, "name": "Smith, J", "zip": "00123", "active": true, "score": 4.5, "note": null})
    );
    assert_eq!(s["last"]["note"], "multi\nline");
    // output_format string: only the upstream text.
    let r = with_file(
        &client,
        json!({"file_path": "users.csv", "data_key": "rows", "output_format": "string"}),
    )
    .await;
    assert!(text(&r).starts_with("{\"keys\""), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn objects_merge_lists_need_a_data_key_and_clashes_are_named() {
    let ctx = with_fixture();
    std::fs::write(ctx.root.join("args.json"), r#"{"limit": 5, "query": "x"}"#).unwrap();
    std::fs::write(ctx.root.join("list.jsonl"), "{\"a\":1}\n{\"a\":2}\n").unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "args.json", "tool_args": {"extra": true}}),
    )
    .await;
    assert_eq!(
        structured(&r)["args"],
        json!({"extra": true, "limit": 5, "query": "x"})
    );
    let r = with_file(
        &client,
        json!({"file_path": "args.json", "tool_args": {"limit": 1}}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments");
    assert!(text(&r).contains("'limit'"));
    let r = with_file(&client, json!({"file_path": "list.jsonl"})).await;
    assert_eq!(error_code(&r), "invalid_arguments");
    assert!(text(&r).contains("data_key"));
    let r = with_file(
        &client,
        json!({"file_path": "list.jsonl", "data_key": "spec.rows"}),
    )
    .await;
    assert_eq!(
        structured(&r)["args"]["spec"]["rows"],
        json!([{"a": 1}, {"a": 2}])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn files_outside_the_roots_broken_files_and_big_files_are_refused() {
    let ctx = crate::with_fixture();
    let outside = ctx.tmp.path().join("secret.csv");
    std::fs::write(&outside, "a\n1\n").unwrap();
    std::os::unix::fs::symlink(&outside, ctx.root.join("link.csv")).unwrap();
    std::fs::write(ctx.root.join("ragged.csv"), "a,b\n1,2\n3\n").unwrap();
    std::fs::write(ctx.root.join("fake.csv"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    let client = ctx.client().await;
    for (path, code) in [
        (outside.display().to_string(), "path_outside_roots"),
        ("link.csv".into(), "path_outside_roots"),
        ("../secret.csv".into(), "path_outside_roots"),
        ("missing.csv".into(), "path_not_found"),
        ("ragged.csv".into(), "parse_error"),
        ("fake.csv".into(), "parse_error"),
    ] {
        let r = with_file(&client, json!({"file_path": path, "data_key": "rows"})).await;
        assert_eq!(error_code(&r), code, "{path}: {}", text(&r));
    }
    let r = with_file(
        &client,
        json!({"file_path": "ragged.csv", "data_key": "rows"}),
    )
    .await;
    assert_eq!(structured(&r)["error"]["line"], 3);
    client.cancel().await.unwrap();

    let ctx = offload_testkit::TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {"fx": offload_testkit::TestContext::fixture(&[])},
                            "limits": {"maxInputBytes": 1000, "maxUpstreamMessageBytes": 5000}}));
    let rows: String = (0..200).map(|i| format!("{i},name {i}\n")).collect();
    std::fs::write(ctx.root.join("big.csv"), format!("id,name\n{rows}")).unwrap();
    let client = ctx.client().await;
    let r = with_file(&client, json!({"file_path": "big.csv", "data_key": "rows"})).await;
    assert_eq!(error_code(&r), "file_too_large");
    assert!(text(&r).contains("batch_size"));
    let r = with_file(
        &client,
        json!({"file_path": "big.csv", "data_key": "rows", "batch_size": 10}),
    )
    .await;
    assert_ne!(
        r.is_error,
        Some(true),
        "batch mode is exempt from the file limit: {}",
        text(&r)
    );
    let r = with_file(
        &client,
        json!({"file_path": "big.csv", "data_key": "rows", "batch_size": 1000}),
    )
    .await;
    assert_eq!(structured(&r)["failed"][0]["batch"], 1);
    assert!(
        structured(&r)["failed"][0]["error"]
            .as_str()
            .unwrap()
            .contains("message budget")
    );
    client.cancel().await.unwrap();
}

/// CSV, TSV and JSONL lists are converted to JSON as they are read and spliced into the
/// message: the same rows arrive, the budget is checked before anything is sent, and a
/// stored answer's record notes the rows instead of holding them.
#[tokio::test]
async fn spliced_lists_arrive_whole_fit_the_budget_and_stay_out_of_records() {
    let ctx = offload_testkit::TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {"fx": offload_testkit::TestContext::fixture(&[])},
                            "limits": {"maxUpstreamMessageBytes": 6000}}));
    let rows: String = (0..100).map(|i| format!("{i}\tname \"{i}\"\n")).collect();
    std::fs::write(ctx.root.join("ok.tsv"), format!("id\tname\n{rows}")).unwrap();
    let rows: String = (0..800).map(|i| format!("{{\"id\":{i}}}\n")).collect();
    std::fs::write(ctx.root.join("big.jsonl"), rows).unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "ok.tsv", "data_key": "data.rows", "tool_args": {"data": {"t": 1}}}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["keys"], json!(["data"]), "{r:?}");
    let r = with_file(
        &client,
        json!({"file_path": "ok.tsv", "data_key": "rows", "filename": "answer.json"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let stored: Value =
        serde_json::from_slice(&std::fs::read(ctx.root.join("answer.json")).unwrap()).unwrap();
    assert_eq!(stored["rows"], 100);
    assert_eq!(stored["first"], json!({"id": 0, "name": "name \"0\""}));
    assert_eq!(stored["last"]["id"], 99);
    let records =
        std::fs::read_to_string(ctx.home.join(".local/share/offload/records.jsonl")).unwrap();
    assert!(records.contains("(100 items from ok.tsv)"), "{records}");
    assert!(!records.contains("splice"), "{records}");

    let r = with_file(
        &client,
        json!({"file_path": "big.jsonl", "data_key": "rows"}),
    )
    .await;
    assert_eq!(error_code(&r), "arguments_too_large", "{}", text(&r));
    let message = text(&r);
    assert!(
        message.contains("larger than the upstream message budget")
            && message.contains("batch_size"),
        "{message}"
    );
    assert!(
        !message.contains("at least"),
        "no figure that reads like the budget: {message}"
    );
    // Nothing was sent: the fixture counts `rows`, 100 stored above and 100 now.
    let r = with_file(&client, json!({"file_path": "ok.tsv", "data_key": "rows"})).await;
    assert_eq!(structured(&r)["rows_total"], 200);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn batches_stream_a_large_csv_in_order_with_progress() {
    let ctx = with_fixture();
    let mut csv = String::from("id,email,score\n");
    for i in 0..25_000 {
        csv.push_str(&format!("{i},user{i}@example.com,{}.5\n", i % 100));
    }
    std::fs::write(ctx.root.join("many.csv"), csv).unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "many.csv", "data_key": "rows", "batch_size": 1000}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let s = structured(&r);
    assert_eq!(
        (
            s["batches"].as_u64(),
            s["items"].as_u64(),
            s["succeeded"].as_u64()
        ),
        (Some(25), Some(25_000), Some(25))
    );
    assert_eq!(
        s["last_result"]["structuredContent"]["rows_total"], 25_000,
        "every row arrived once"
    );
    assert_eq!(
        s["last_result"]["structuredContent"]["last"]["id"], 24_999,
        "in order"
    );
    let progress = client.service().progress.lock().unwrap().len();
    assert!(progress >= 25, "progress per batch: {progress}");
    let _ = client
        .service()
        .resource_list_changed
        .load(Ordering::SeqCst);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_failing_batch_stops_the_run_unless_told_to_go_on() {
    let ctx = with_fixture();
    let mut lines = Vec::new();
    for i in 0..50 {
        lines.push(json!({"id": i, "poison": i == 23}).to_string());
    }
    std::fs::write(ctx.root.join("items.jsonl"), lines.join("\n")).unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "items.jsonl", "data_key": "rows", "batch_size": 10}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let s = structured(&r);
    assert_eq!(
        (s["batches"].as_u64(), s["succeeded"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(
        s["failed"][0],
        json!({"batch": 3, "first_item": 20, "error": "poisoned row"})
    );
    let r = with_file(&client, json!({"file_path": "items.jsonl", "data_key": "rows", "batch_size": 10, "continue_on_error": true})).await;
    let s = structured(&r);
    assert_eq!(
        (
            s["batches"].as_u64(),
            s["succeeded"].as_u64(),
            s["failed"].as_array().map(Vec::len)
        ),
        (Some(5), Some(4), Some(1))
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn file_references_work_in_call_tool_and_stay_inside_the_roots() {
    let ctx = with_fixture();
    std::fs::write(ctx.root.join("note.txt"), "from a file").unwrap();
    std::fs::write(ctx.root.join("cfg.yaml"), "a: [1, 2]\n").unwrap();
    let client = ctx.client().await;
    let r = fx(&client, "echo", json!({"text": {"$file": "note.txt"}})).await;
    assert_eq!(text(&r), "from a file");
    let r = fx(&client, "received", json!({"cfg": {"$file": "cfg.yaml", "as": "data"}, "raw": {"$file": "note.txt", "as": "base64"}})).await;
    assert_eq!(
        structured(&r)["args"],
        json!({"cfg": {"a": [1, 2]}, "raw": "ZnJvbSBhIGZpbGU="})
    );
    let r = fx(&client, "echo", json!({"text": {"$file": "/etc/hostname"}})).await;
    assert_eq!(error_code(&r), "path_outside_roots");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_call_is_an_audit_event_without_arguments_or_content() {
    let ctx = with_fixture();
    std::fs::write(ctx.root.join("rows.csv"), "a\n1\n2\n3\n").unwrap();
    std::fs::write(ctx.root.join("note.txt"), "FILE-CONTENT-789").unwrap();
    let client = ctx.client().await;
    fx(&client, "echo", json!({"text": "SECRET-PAYLOAD-123"})).await;
    fx(&client, "echo", json!({"text": {"$file": "note.txt"}})).await;
    call(&client, "call_tool_and_store", json!({"server": "fx", "tool_name": "structured", "tool_args": {"n": 4}, "file_format": "csv"})).await;
    with_file(
        &client,
        json!({"file_path": "rows.csv", "data_key": "rows", "batch_size": 2}),
    )
    .await;
    fx(&client, "fail", json!({"message": "nope"})).await;
    client.cancel().await.unwrap();
    let log = std::fs::read_to_string(ctx.home.join(".local/share/offload/audit.jsonl")).unwrap();
    assert!(
        !log.contains("SECRET-PAYLOAD-123") && !log.contains("FILE-CONTENT-789"),
        "{log}"
    );
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "call",
            "file_ref",
            "call",
            "store",
            "batch_part",
            "batch_part",
            "batch",
            "call"
        ],
        "{log}"
    );
    assert_eq!(events[0]["client"], "offload-tests/0");
    assert_eq!(events[0]["server"], "fx");
    assert_eq!(events[3]["rows"], 4);
    // Each batch as it was answered, then the run.
    let part = |e: &Value| {
        (
            e["batches"].as_u64(),
            e["first_item"].as_u64(),
            e["rows"].as_u64(),
        )
    };
    assert_eq!(part(&events[4]), (Some(1), Some(0), Some(2)));
    assert_eq!(part(&events[5]), (Some(2), Some(2), Some(1)));
    assert_eq!(
        (events[6]["rows"].as_u64(), events[6]["batches"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(events[7]["outcome"], "upstream_tool_error");
    assert_eq!(events[1]["file"], json!(ctx.root.join("note.txt")));
}

#[tokio::test]
async fn spreadsheet_rows_arrive_from_the_first_or_named_sheet() {
    let ctx = with_fixture();
    let mut wb = rust_xlsxwriter::Workbook::new();
    let s = wb.add_worksheet().set_name("orders").unwrap();
    s.write_string(0, 0, "id").unwrap();
    s.write_string(0, 1, "sku").unwrap();
    s.write_number(1, 0, 7.0).unwrap();
    s.write_string(1, 1, "00042").unwrap();
    let t = wb.add_worksheet().set_name("notes").unwrap();
    t.write_string(0, 0, "text").unwrap();
    t.write_string(1, 0, "hello").unwrap();
    wb.save(ctx.root.join("book.xlsx")).unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "book.xlsx", "data_key": "rows"}),
    )
    .await;
    assert_eq!(
        structured(&r)["first"],
        json!({"id": 7, "sku": "00042"}),
        "{}",
        text(&r)
    );
    let r = with_file(
        &client,
        json!({"file_path": "book.xlsx", "data_key": "rows", "sheet": "notes"}),
    )
    .await;
    assert_eq!(structured(&r)["first"], json!({"text": "hello"}));
    let r = with_file(
        &client,
        json!({"file_path": "book.xlsx", "data_key": "rows", "sheet": "missing"}),
    )
    .await;
    assert_eq!(error_code(&r), "parse_error");
    assert!(text(&r).contains("orders, notes"), "{}", text(&r));
    client.cancel().await.unwrap();
}

/// Types are decided per column (a zip or phone column stays text if one cell must), and
/// `column_types` overrides: lists split on a separator, integers with leading zeros. The
/// default answer is the upstream result itself: its text once, not JSON escaped in JSON.
#[tokio::test]
async fn csv_columns_have_one_type_and_column_types_override() {
    let ctx = with_fixture();
    std::fs::write(
        ctx.root.join("people.csv"),
        "zip,phone,age,tags,code\n01234,555-1234,30,a;b,007\n12345,5551234,41,,8\n",
    )
    .unwrap();
    let client = ctx.client().await;
    let r = with_file(
        &client,
        json!({"file_path": "people.csv", "data_key": "rows"}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        s["first"],
        json!({"zip": "01234", "phone": "555-1234", "age": 30, "tags": "a;b", "code": "007"})
    );
    assert_eq!(
        s["last"],
        json!({"zip": "12345", "phone": "5551234", "age": 41, "tags": null, "code": "8"})
    );
    // The answer is the upstream result as it is: one text block, the structured content.
    assert_eq!(r.content.len(), 1);
    assert!(
        text(&r).starts_with("{\"keys\""),
        "not double-encoded: {}",
        text(&r)
    );

    let r = with_file(
        &client,
        json!({"file_path": "people.csv", "data_key": "rows",
               "column_types": {"tags": "list", "code": "integer", "zip": "string"}}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["first"]["tags"], json!(["a", "b"]));
    assert_eq!(s["last"]["tags"], json!([]));
    assert_eq!(s["first"]["code"], 7);
    let r = with_file(
        &client,
        json!({"file_path": "people.csv", "data_key": "rows", "column_types": {"phone": "integer"}}),
    )
    .await;
    assert_eq!(error_code(&r), "parse_error", "{}", text(&r));
    assert!(
        text(&r).contains("column 'phone'") && text(&r).contains("line 2"),
        "{}",
        text(&r)
    );
    let r = with_file(
        &client,
        json!({"file_path": "people.csv", "data_key": "rows", "column_types": {"age": "timestamp"}}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments");
    // Batch mode types the same way across batches.
    let r = with_file(
        &client,
        json!({"file_path": "people.csv", "data_key": "rows", "batch_size": 1}),
    )
    .await;
    assert_eq!(structured(&r)["succeeded"], 2, "{}", text(&r));
    client.cancel().await.unwrap();
}
