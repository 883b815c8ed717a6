//! Compressed files (`.gz`, `.zst`, `.bz2`, `.xz`) read as what they hold by every file tool,
//! `call_tool_with_file_content` (whole and in batches) and `$file`, through a real `offload
//! mcp` session; a bomb is bounded by the input limit.

use std::io::Write;
use std::path::Path;

use offload_testkit::{TestContext, call, error_code, structured, text};
use serde_json::json;

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut std::io::Cursor::new(bytes), &mut out).unwrap();
    out
}

fn write(dir: &Path, name: &str, bytes: Vec<u8>) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

#[tokio::test]
async fn compressed_files_are_read_as_what_they_hold() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let csv: String = std::iter::once("id,name,score\n".to_owned())
        .chain((0..5000).map(|i| format!("{i},name {i},{}.5\n", i % 7)))
        .collect();
    write(&ctx.root, "rows.csv.gz", gz(csv.as_bytes()));
    write(&ctx.root, "rows.csv.bz2", bz2(csv.as_bytes()));
    write(&ctx.root, "rows.csv.xz", xz(csv.as_bytes()));
    let jsonl: String = (0..10).map(|i| format!("{{\"n\":{i}}}\n")).collect();
    write(
        &ctx.root,
        "items.jsonl.zst",
        zstd::encode_all(jsonl.as_bytes(), 3).unwrap(),
    );
    write(&ctx.root, "args.json.gz", gz(br#"{"text": "from a gzip"}"#));
    let client = ctx.client().await;

    for name in ["rows.csv.gz", "rows.csv.bz2", "rows.csv.xz"] {
        // The schema: a CSV with its exact row count and types.
        let r = call(&client, "get_file_schema", json!({"path": name})).await;
        assert_ne!(r.is_error, Some(true), "{name}: {}", text(&r));
        let s = structured(&r);
        assert_eq!(s["row_count"], 5000, "{name}: {s}");
        assert!(s.to_string().contains("score"), "{name}: {s}");
        // The last lines (read by position: decompressed whole once).
        let r = call(&client, "read_file", json!({"path": name, "offset": -2})).await;
        let t = text(&r);
        assert!(
            t.contains("4998,name 4998") && t.contains("4999,name 4999"),
            "{name}: {t}"
        );
        let r = call(
            &client,
            "summarize_file",
            json!({"path": name, "max_lines": 3}),
        )
        .await;
        let s = structured(&r);
        assert_eq!(s["line_count"], 5001, "{name}: {s}");
        assert_eq!(s["extension"], "csv", "{name}: {s}");
    }

    // SQL on a compressed CSV.
    let r = call(
        &client,
        "query_file",
        json!({"path": "rows.csv.gz", "sql": "SELECT count(*) AS n, max(id) AS top FROM data"}),
    )
    .await;
    assert_eq!(
        structured(&r)["rows"][0],
        json!([5000, 4999]),
        "{}",
        text(&r)
    );

    // Whole and in batches into a tool's arguments.
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "items.jsonl.zst", "data_key": "rows"}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        (s["rows"].clone(), s["last"].clone()),
        (json!(10), json!({"n": 9})),
        "{s}"
    );
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "rows.csv.gz", "data_key": "rows", "batch_size": 2000}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        (
            s["batches"].clone(),
            s["items"].clone(),
            s["succeeded"].clone()
        ),
        (json!(3), json!(5000), json!(3)),
        "{s}"
    );
    assert_eq!(
        s["last_result"]["structuredContent"]["last"]["id"], 4999,
        "{s}"
    );

    // $file: text and data are what it holds, bytes are the file's own.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": "args.json.gz", "as": "text"}}}),
    )
    .await;
    assert!(text(&r).contains("from a gzip"), "{}", text(&r));
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "args.json.gz"}),
    )
    .await;
    assert_eq!(
        structured(&r)["args"]["text"],
        "from a gzip",
        "{}",
        text(&r)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_compression_bomb_is_bounded_by_the_input_limit_and_garbage_is_an_error() {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "limits": {"maxInputBytes": 1_000_000},
    }));
    // 200 MB of one JSON string's characters: a few hundred KB compressed.
    let mut bomb = b"[\"".to_vec();
    bomb.extend(std::iter::repeat_n(b'a', 200_000_000));
    bomb.extend(b"\"]");
    let packed = gz(&bomb);
    drop(bomb);
    assert!(packed.len() < 1_000_000, "{}", packed.len());
    write(&ctx.root, "bomb.json.gz", packed);
    write(
        &ctx.root,
        "fake.csv.gz",
        b"id,name\n1,plain text, not gzip\n".to_vec(),
    );
    let client = ctx.client().await;
    let started = std::time::Instant::now();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "bomb.json.gz", "data_key": "rows"}),
    )
    .await;
    assert_eq!(error_code(&r), "file_too_large", "{}", text(&r));
    assert!(
        text(&r).contains("decompresses to more than 1.0 MB"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": "bomb.json.gz"}}}),
    )
    .await;
    assert_eq!(error_code(&r), "file_too_large", "{}", text(&r));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    for (tool, args) in [
        ("read_file", json!({"path": "fake.csv.gz"})),
        ("get_file_schema", json!({"path": "fake.csv.gz"})),
        (
            "call_tool_with_file_content",
            json!({"server": "fx", "tool_name": "received", "file_path": "fake.csv.gz", "data_key": "rows"}),
        ),
    ] {
        let r = call(&client, tool, args).await;
        assert_eq!(r.is_error, Some(true), "{tool}: {}", text(&r));
        assert!(
            text(&r).to_lowercase().contains("gzip") || text(&r).contains("invalid"),
            "{tool}: {}",
            text(&r)
        );
    }
    client.cancel().await.unwrap();
}

/// Big stores compressed: `file_format: "csv.gz"` (or a filename that ends so) writes the
/// table gzip-compressed, and the file tools read it back as the CSV it holds.
#[tokio::test]
async fn answers_are_stored_compressed_on_request_and_read_back() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let client = ctx.client().await;
    for (args, ext, magic) in [
        (
            json!({"file_format": "csv.gz"}),
            "csv.gz",
            &[0x1f, 0x8b][..],
        ),
        (
            json!({"filename": "rows.jsonl.zst"}),
            "jsonl.zst",
            &[0x28, 0xb5, 0x2f, 0xfd][..],
        ),
        (json!({"file_format": "csv.bz2"}), "csv.bz2", &b"BZh"[..]),
    ] {
        let mut call_args = json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 2000}});
        for (k, v) in args.as_object().unwrap() {
            call_args[k] = v.clone();
        }
        let r = call(&client, "call_tool_and_store", call_args).await;
        assert_ne!(r.is_error, Some(true), "{ext}: {}", text(&r));
        let s = structured(&r);
        let path = s["path"].as_str().unwrap().to_owned();
        assert!(path.ends_with(ext), "{path}");
        assert_eq!(s["format"], ext, "{s}");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(magic), "{ext}: not compressed");
        let r = call(&client, "summarize_file", json!({"path": path})).await;
        let summary = structured(&r);
        assert!(
            summary["line_count"].as_u64().unwrap() >= 2000,
            "{ext}: {summary}"
        );
        assert!(
            (summary["size"].as_u64().unwrap()) > bytes.len() as u64 * 2,
            "{ext}: compressed {} vs held {}",
            bytes.len(),
            summary["size"]
        );
    }
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 3}, "file_format": "csv.xz"}),
    )
    .await;
    assert_eq!(error_code(&r), "unsupported_format", "{}", text(&r));
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 3}, "file_format": "parquet.gz"}),
    )
    .await;
    assert_eq!(error_code(&r), "unsupported_format", "{}", text(&r));
    client.cancel().await.unwrap();
}
