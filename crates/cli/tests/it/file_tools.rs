//! `get_file_schema`, `summarize_file` and `read_file` through `offload mcp` with a real client:
//! CSV, JSON, text pages and tails, long lines, spreadsheets, PDF (text extracted by the
//! `offload pdf-text` child), images, binary files and paths outside the roots.

use offload_testkit::wire::Wire;
use offload_testkit::{TestContext, call, error_code, page, structured, text};
use serde_json::json;

/// A context whose root is the allowed directory, with no upstream servers.
fn rooted() -> TestContext {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    ctx
}

#[tokio::test]
async fn csv_schema_counts_quoted_newlines_and_sees_late_type_changes() {
    let ctx = rooted();
    let mut csv = String::from("\u{feff}id,name,amount,when\r\n");
    for i in 0..5000 {
        let name = if i % 100 == 0 {
            "\"two\r\nlines, quoted\"".to_owned()
        } else {
            format!("n{i}")
        };
        // The amount column is integer until the very last row.
        let amount = if i == 4999 {
            "12.5".to_owned()
        } else {
            i.to_string()
        };
        csv.push_str(&format!(
            "{i},{name},{amount},2024-05-{:02}\r\n",
            i % 28 + 1
        ));
    }
    std::fs::write(ctx.root.join("orders.csv"), csv).unwrap();
    let client = ctx.client().await;
    let r = call(&client, "get_file_schema", json!({"path": "orders.csv"})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    assert_eq!(s["format"], "csv");
    assert_eq!(s["row_count"], 5000);
    assert_eq!(s["has_header"], true);
    assert_eq!(s["encoding"], "utf-8 (bom)");
    let cols = s["columns"].as_array().unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["id", "name", "amount", "when"]);
    assert_eq!(cols[0]["type"], "integer");
    assert_eq!(
        cols[2]["type"], "number",
        "the last row's 12.5 makes it a number"
    );
    assert_eq!(cols[3]["type"], "date");
    assert!(text(&r).contains("5000 rows x 4 columns"), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn text_pages_tails_and_summaries_are_exact() {
    let ctx = rooted();
    let body: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ctx.root.join("big.log"), body).unwrap();
    let client = ctx.client().await;
    let r = call(
        &client,
        "read_file",
        json!({"path": "big.log", "offset": 40000, "length": 3}),
    )
    .await;
    let s = page(&r);
    assert_eq!(s["content"], "line 40000\nline 40001\nline 40002");
    assert_eq!(
        (
            s["offset"].clone(),
            s["count"].clone(),
            s["next_offset"].clone()
        ),
        (json!(40000), json!(3), json!(40003))
    );
    assert_eq!(s["total"], 50_000);
    let r = call(
        &client,
        "read_file",
        json!({"path": "big.log", "offset": -2}),
    )
    .await;
    let s = page(&r);
    assert_eq!(s["content"], "line 49998\nline 49999");
    assert_eq!(s["offset"], 49998);
    assert!(s.get("next_offset").is_none());
    let r = call(
        &client,
        "read_file",
        json!({"path": "big.log", "offset": 60000}),
    )
    .await;
    assert_eq!(page(&r)["count"], 0);
    assert!(text(&r).contains("past the end"), "{}", text(&r));
    let r = call(
        &client,
        "summarize_file",
        json!({"path": "big.log", "max_lines": 2}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["line_count"], 50_000);
    assert_eq!(s["head"], "line 0\nline 1");
    assert_eq!(
        s["tail"],
        "line 49995\nline 49996\nline 49997\nline 49998\nline 49999"
    );
    assert_eq!(s["truncated"], true);
    // The default page is cut by the byte budget, and says where to go on.
    let r = call(
        &client,
        "read_file",
        json!({"path": "big.log", "length": 20000}),
    )
    .await;
    let s = page(&r);
    assert_eq!(s["truncated"], true);
    let n = s["count"].as_u64().unwrap();
    assert_eq!(s["next_offset"], n);
    // The whole answer fits the inline budget (16 KiB by default), and the page travels once:
    // its text, no structured copy (issue 53: a 64 KiB page reached the client as 130 KB).
    assert!(text(&r).len() < 16 * 1024, "{}", text(&r).len());
    assert!(r.structured_content.is_none());
    let wire = serde_json::to_string(&r).unwrap().len();
    let content = s["content"].as_str().unwrap().len();
    assert!(
        wire < content * 6 / 5,
        "{wire} bytes on the wire for a {content}-byte page"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_one_line_json_of_3_mb_stays_readable() {
    let ctx = rooted();
    let items: Vec<_> = (0..40_000).map(|i| json!({"id": i, "v": "x"})).collect();
    let doc = serde_json::to_string(&items).unwrap();
    std::fs::write(ctx.root.join("one.json"), &doc).unwrap();
    let client = ctx.client().await;
    let r = call(&client, "read_file", json!({"path": "one.json"})).await;
    let s = page(&r);
    let next = s["next_byte_offset"].as_u64().unwrap();
    assert!(next > 12_000 && next <= 16 * 1024, "{next}");
    let r = call(
        &client,
        "read_file",
        json!({"path": "one.json", "byte_offset": next}),
    )
    .await;
    let piece = page(&r)["content"].as_str().unwrap().to_owned();
    assert!(doc[next as usize..].starts_with(&piece));
    let r = call(&client, "get_file_schema", json!({"path": "one.json"})).await;
    let s = structured(&r);
    assert_eq!(s["root_type"], "array");
    assert_eq!(s["element_count"], 40_000);
    assert_eq!(s["outline"], "[{id: integer, v: string}]");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn spreadsheets_pdfs_and_images() {
    let ctx = rooted();
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("Sales").unwrap();
    sheet.write_row(0, 0, ["region", "units", "price"]).unwrap();
    for r in 1..=50u32 {
        sheet.write(r, 0, format!("r{r}")).unwrap();
        sheet.write(r, 1, r).unwrap();
        sheet.write(r, 2, f64::from(r) + 0.5).unwrap();
    }
    book.add_worksheet().set_name("Empty").unwrap();
    book.save(ctx.root.join("sales.xlsx")).unwrap();
    std::fs::write(
        ctx.root.join("report.pdf"),
        offload_testkit::docs::pdf(
            "Quarterly report",
            &["First page text", "Second page text", "Third page text"],
        ),
    )
    .unwrap();
    std::fs::write(
        ctx.root.join("photo.png"),
        offload_testkit::docs::image(3000, 2000, image::ImageFormat::Png),
    )
    .unwrap();
    let client = ctx.client().await;

    let r = call(&client, "get_file_schema", json!({"path": "sales.xlsx"})).await;
    let s = structured(&r);
    assert_eq!(s["format"], "spreadsheet", "{r:?}");
    assert_eq!(s["sheets"][0]["name"], "Sales");
    assert_eq!(s["sheets"][0]["dimensions"], "A1:C51");
    assert_eq!(s["sheets"][0]["columns"][1]["type"], "integer");
    assert_eq!(s["sheets"][0]["columns"][2]["type"], "number");
    assert_eq!(s["sheets"][1]["rows"], 0);
    let r = call(
        &client,
        "read_file",
        json!({"path": "sales.xlsx", "sheet": "0", "range": "A2:B4"}),
    )
    .await;
    let s = page(&r);
    assert_eq!(s["rows"], json!([["r1", 1], ["r2", 2], ["r3", 3]]), "{r:?}");
    assert_eq!(s["sheets"], json!(["Sales", "Empty"]));
    let r = call(
        &client,
        "read_file",
        json!({"path": "sales.xlsx", "offset": 49, "length": 10}),
    )
    .await;
    let s = page(&r);
    assert_eq!(s["rows"], json!([["r49", 49, 49.5], ["r50", 50, 50.5]]));
    assert_eq!(s["total"], 51);
    assert!(s.get("next_offset").is_none());
    let r = call(
        &client,
        "read_file",
        json!({"path": "sales.xlsx", "sheet": "Nope"}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments");
    assert!(text(&r).contains("Sales, Empty"));

    let r = call(&client, "get_file_schema", json!({"path": "report.pdf"})).await;
    let s = structured(&r);
    assert_eq!(s["pages"], 3, "{r:?}");
    assert_eq!(s["metadata"]["title"], "Quarterly report");
    let r = call(
        &client,
        "read_file",
        json!({"path": "report.pdf", "offset": 1, "length": 1}),
    )
    .await;
    let s = page(&r);
    let content = s["content"].as_str().unwrap();
    assert!(
        content.contains("<!-- page 2 of 3 -->") && content.contains("Second page text"),
        "{r:?}"
    );
    assert!(!content.contains("First page"));
    assert_eq!(s["next_offset"], 2);
    // One page numbering, the one a person reads: the header agrees with the marker.
    assert!(text(&r).contains("pages 2-2 of 3"), "{}", text(&r));
    let r = call(&client, "get_file_schema", json!({"path": "report.pdf"})).await;
    let t = text(&r);
    assert!(
        t.contains("3 pages") && t.contains("- title: Quarterly report"),
        "{t}"
    );
    assert!(!t.contains('{'), "readable text, not a JSON line: {t}");
    let r = call(&client, "get_file_schema", json!({"path": "sales.xlsx"})).await;
    let t = text(&r);
    assert!(
        t.contains("sheet \"Sales\":") && t.contains("rows x"),
        "{t}"
    );
    assert!(!t.contains("{\""), "readable text, not a JSON line: {t}");

    let r = call(&client, "read_file", json!({"path": "photo.png"})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let info = &page(&r)["image"];
    assert_eq!(
        (info["width"].clone(), info["height"].clone()),
        (json!(3000), json!(2000))
    );
    assert!(info["shown_width"].as_u64().unwrap() <= 1568);
    assert!(info["shown_bytes"].as_u64().unwrap() <= 72 * 1024);
    let image = r
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    assert_eq!(image.mime_type, "image/jpeg");
    let r = call(&client, "get_file_schema", json!({"path": "photo.png"})).await;
    assert_eq!(structured(&r)["width"], 3000);
    assert!(text(&r).contains("3000 x 2000 pixels"), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn outside_paths_binary_files_and_bad_arguments() {
    let ctx = rooted();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), ctx.root.join("link.txt")).unwrap();
    std::fs::write(ctx.root.join("blob.bin"), [0u8, 1, 2, 3, 0, 255, 254]).unwrap();
    let client = ctx.client().await;
    for tool in ["get_file_schema", "summarize_file", "read_file"] {
        let r = call(&client, tool, json!({"path": outside.path()})).await;
        assert_eq!(error_code(&r), "path_outside_roots", "{tool}");
        let r = call(&client, tool, json!({"path": "link.txt"})).await;
        assert_eq!(
            error_code(&r),
            "path_outside_roots",
            "{tool} through a symlink"
        );
        let r = call(&client, tool, json!({"path": "missing.txt"})).await;
        assert_eq!(error_code(&r), "path_not_found", "{tool}");
    }
    let r = call(&client, "read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(error_code(&r), "unsupported_format");
    let r = call(&client, "summarize_file", json!({"path": "blob.bin"})).await;
    assert_eq!(structured(&r)["encoding"], "binary");
    let err = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("read_file").with_arguments(
                json!({"path": "x", "offset": "ten"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("-32602") || err.to_string().contains("invalid"),
        "{err}"
    );
    client.cancel().await.unwrap();
}

/// A CSV of at least `mib` MiB in the root, written block by block; its data rows.
fn big_csv(ctx: &TestContext, name: &str, mib: usize) -> (String, u64) {
    use std::io::Write;
    let block: String = (0..20_000)
        .map(|i| format!("{i},\"name {i}\",{i}.5\n"))
        .collect();
    let path = ctx.root.join(name);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    out.write_all(b"id,name,amount\n").unwrap();
    let blocks = (mib << 20).div_ceil(block.len());
    for _ in 0..blocks {
        out.write_all(block.as_bytes()).unwrap();
    }
    out.flush().unwrap();
    (path.to_string_lossy().into_owned(), blocks as u64 * 20_000)
}

/// A long schema scan reports progress against the file size, all before its answer.
#[tokio::test]
async fn a_long_schema_scan_reports_progress() {
    let ctx = rooted();
    let (path, rows) = big_csv(&ctx, "rows.csv", 40);
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    let mut wire = Wire::start(&ctx).await;
    wire.call(1, "get_file_schema", json!({"path": path}), Some("scan"))
        .await;
    let (answer, progress) = wire.answer(1, "scan").await;
    assert_eq!(
        answer["result"]["structuredContent"]["row_count"], rows,
        "{answer}"
    );
    assert!(progress.len() >= 3, "{progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0].0 < w[1].0),
        "rising: {progress:?}"
    );
    for (done, total) in &progress {
        let total = total.expect("a total");
        assert!(*done <= total && total <= size, "{done} of {total}");
    }
}

/// Cancelling a scan stops it: the work ends within a step of the cancellation (the client hears
/// nothing more of that request, as MCP wants; the log says where the scan stopped), and the
/// session goes on.
#[tokio::test]
async fn cancelling_a_schema_scan_stops_it() {
    let ctx = rooted();
    let (path, _) = big_csv(&ctx, "rows.csv", 160);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut wire = Wire::start(&ctx).await;
    wire.call(1, "get_file_schema", json!({"path": path}), Some("scan"))
        .await;
    loop {
        let message = wire.next().await;
        assert_ne!(message["id"], 1, "answered before any progress: {message}");
        if message["method"] == "notifications/progress" {
            break;
        }
    }
    wire.cancel(1).await;
    let logged = async {
        loop {
            let log = ctx.log();
            if let Some(line) = log
                .lines()
                .find(|l| l.contains("cancelled: the scan stopped"))
            {
                return line.to_owned();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    let stopped = tokio::time::timeout(std::time::Duration::from_secs(60), logged)
        .await
        .expect("the cancelled scan is logged");
    let field = |name: &str| -> u64 {
        let at = stopped.find(&format!("{name}=")).expect(name) + name.len() + 1;
        let digits: String = stopped[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().expect(name)
    };
    // Progress comes every 8 MiB: stopping within a step or two of the first is far from 160 MiB.
    assert!(field("done") <= 24 << 20, "{stopped}");
    assert!(field("total") <= size, "{stopped}");
    wire.call(
        2,
        "summarize_file",
        json!({"path": path, "max_lines": 2}),
        None,
    )
    .await;
    let (answer, progress) = wire.answer(2, "scan").await;
    assert!(
        progress.len() <= 2,
        "no progress after the cancellation: {progress:?}"
    );
    let summary = &answer["result"]["structuredContent"];
    assert_eq!(
        summary["head"], "id,name,amount\n0,\"name 0\",0.5",
        "{answer}"
    );
}
