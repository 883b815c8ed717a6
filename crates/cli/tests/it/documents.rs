//! Word documents through a real `offload mcp` session: a `.docx` written by python-docx (a
//! real writer, not our own zip) read as Markdown blocks with its outline, and hostile ones — a
//! zip bomb, a broken zip, a zip that is no Word document — refused with clear errors.

use std::path::Path;
use std::time::{Duration, Instant};

use offload_testkit::{TestContext, call, error_code, page, structured, text};
use serde_json::json;

use crate::interop::interop_dir;

/// Runs one of the generators in `tests/interop` with the interop venv's Python.
fn python(script: &str, args: &[&str]) {
    let out = std::process::Command::new(interop_dir().join(".venv/bin/python"))
        .arg(interop_dir().join(script))
        .args(args)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn make(args: &[&str]) {
    python("make_docx.py", args);
}

fn make_pdf(args: &[&str]) {
    python("make_pdf.py", args);
}

fn path(root: &Path, name: &str) -> String {
    root.join(name).display().to_string()
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn word_documents_are_read_as_markdown_blocks_with_their_outline() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    make(&["report", &path(&ctx.root, "report.docx")]);
    let client = ctx.client().await;

    let r = call(&client, "get_file_schema", json!({"path": "report.docx"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let s = structured(&r);
    assert_eq!(s["format"], "docx", "{s}");
    assert_eq!(
        (s["blocks"].clone(), s["tables"].clone()),
        (json!(309), json!(1)),
        "{s}"
    );
    let outline: Vec<(u64, String, u64)> = s["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["level"].as_u64().unwrap(),
                h["text"].as_str().unwrap().to_owned(),
                h["block"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outline,
        [
            (1, "Quarterly report".to_owned(), 0),
            (1, "Regions".to_owned(), 2),
            (2, "Details".to_owned(), 6),
            (1, "Appendix".to_owned(), 307)
        ]
    );
    assert!(text(&r).contains("  - Details (block 6)"), "{}", text(&r));

    // Paged by blocks: headings, list items and a table as Markdown.
    let r = call(
        &client,
        "read_file",
        json!({"path": "report.docx", "length": 6}),
    )
    .await;
    let s = page(&r);
    assert_eq!(
        (
            s["kind"].clone(),
            s["count"].clone(),
            s["total"].clone(),
            s["next_offset"].clone()
        ),
        (json!("document"), json!(6), json!(309), json!(6)),
        "{s}"
    );
    assert_eq!(
        s["content"],
        "# Quarterly report\n\nSales & costs grew in every region.\n\n# Regions\n\n- North met its target\n\n\
         - South met its target\n\n| Region | Q1 | Q2 |\n| --- | --- | --- |\n| North | 10 | 12 |\n| South | 7 | 9\\|10 |",
    );
    assert!(text(&r).contains("blocks 0-5 of 309"), "{}", text(&r));
    let r = call(
        &client,
        "read_file",
        json!({"path": "report.docx", "offset": 307}),
    )
    .await;
    assert_eq!(
        page(&r)["content"],
        "# Appendix\n\nThe end.",
        "{}",
        text(&r)
    );
    assert!(page(&r).get("next_offset").is_none());
    let r = call(
        &client,
        "read_file",
        json!({"path": "report.docx", "offset": -1}),
    )
    .await;
    assert_eq!(page(&r)["content"], "The end.");
    let r = call(&client, "summarize_file", json!({"path": "report.docx"})).await;
    assert!(text(&r).contains("a Word document"), "{}", text(&r));
    let r = call(
        &client,
        "read_file",
        json!({"path": "report.docx", "range": "A1:B2"}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments", "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn hostile_word_documents_are_refused_quickly() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    // 100 MiB of document part in a ~150 KB file.
    make(&["bomb", &path(&ctx.root, "bomb.docx"), "100"]);
    assert!(std::fs::metadata(ctx.root.join("bomb.docx")).unwrap().len() < 1 << 20);
    std::fs::write(
        ctx.root.join("broken.docx"),
        b"PK\x03\x04 this is no zip at all",
    )
    .unwrap();
    // A zip that holds no Word document.
    make(&["report", &path(&ctx.root, "real.docx")]);
    make(&[
        "strip",
        &path(&ctx.root, "real.docx"),
        &path(&ctx.root, "other.docx"),
    ]);
    let client = ctx.client().await;

    for tool in ["get_file_schema", "read_file"] {
        let started = Instant::now();
        let r = call(&client, tool, json!({"path": "bomb.docx"})).await;
        assert_eq!(error_code(&r), "file_too_large", "{tool}: {}", text(&r));
        assert!(
            text(&r).contains("decompresses to more than 64 MiB"),
            "{}",
            text(&r)
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{tool}: {:?}",
            started.elapsed()
        );
    }
    let r = call(&client, "read_file", json!({"path": "broken.docx"})).await;
    assert_eq!(error_code(&r), "parse_error", "{}", text(&r));
    let r = call(&client, "get_file_schema", json!({"path": "other.docx"})).await;
    assert_eq!(error_code(&r), "parse_error", "{}", text(&r));
    assert!(text(&r).contains("no word/document.xml"), "{}", text(&r));
    client.cancel().await.unwrap();
}

/// The images of an answer: (MIME type, decoded width and height).
fn images(r: &rmcp::model::CallToolResult) -> Vec<(String, u32, u32)> {
    use base64::Engine as _;
    r.content
        .iter()
        .filter_map(|c| c.as_image())
        .map(|i| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&i.data)
                .unwrap();
            let picture = image::load_from_memory(&bytes).expect("a decodable image");
            (i.mime_type.clone(), picture.width(), picture.height())
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn pdf_pages_come_with_their_embedded_images() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    make_pdf(&["images", &path(&ctx.root, "photos.pdf")]);
    make_pdf(&["many", &path(&ctx.root, "many.pdf"), "300"]);
    let client = ctx.client().await;

    // The schema counts images per page (written by reportlab: a JPEG, raw RGB, raw gray).
    let r = call(&client, "get_file_schema", json!({"path": "photos.pdf"})).await;
    assert_eq!(
        structured(&r)["images"],
        json!({"1": 2, "3": 1}),
        "{}",
        text(&r)
    );
    assert!(
        text(&r).contains("embedded images: page 1: 2, page 3: 1"),
        "{}",
        text(&r)
    );

    // Page 1: its text, then its two images as image blocks, each within its share.
    let r = call(
        &client,
        "read_file",
        json!({"path": "photos.pdf", "offset": 0, "length": 1}),
    )
    .await;
    assert!(text(&r).contains("Page one has a photo"), "{}", text(&r));
    let shown = images(&r);
    assert_eq!(shown.len(), 2, "{shown:?}");
    // The 640x480 photo is scaled down to its share of the budget, keeping its shape.
    let (w, h) = (shown[0].1, shown[0].2);
    assert!(
        (100..=640).contains(&w) && (w * 3).abs_diff(h * 4) <= 4,
        "{shown:?}"
    );
    assert_eq!(
        (shown[1].1, shown[1].2),
        (200, 100),
        "the RGB samples: {shown:?}"
    );
    assert!(
        r.content
            .iter()
            .filter_map(|c| c.as_image())
            .all(|i| i.data.len() < 33 * 1024)
    );
    assert_eq!(
        page(&r)["note"],
        "page 1: 2 images, 2 shown",
        "{}",
        text(&r)
    );
    // The whole document: three images, the text-only page notes nothing.
    let r = call(&client, "read_file", json!({"path": "photos.pdf"})).await;
    assert_eq!(images(&r).len(), 3);
    assert_eq!(
        page(&r)["note"],
        "page 1: 2 images, 2 shown; page 3: 1 image, 1 shown",
    );

    // Hundreds of images: counted, three shown, the rest named in the note, quickly.
    let started = Instant::now();
    let r = call(&client, "get_file_schema", json!({"path": "many.pdf"})).await;
    assert_eq!(structured(&r)["images"], json!({"1": 300}), "{}", text(&r));
    let r = call(&client, "read_file", json!({"path": "many.pdf"})).await;
    assert_eq!(images(&r).len(), 3);
    let note = page(&r)["note"].as_str().unwrap().to_owned();
    assert!(
        note.starts_with("page 1: 300 images, 3 shown (not shown: 8x8: over the 3 images"),
        "{note}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    client.cancel().await.unwrap();
}
