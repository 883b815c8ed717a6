//! Several files into one `call_tool_with_file_content`: `file_paths` or a glob, rows joined or
//! batched across the files, and globs that stay inside the roots.

use offload_testkit::{error_code, structured, text};
use serde_json::json;

use crate::file_content::with_file;
use crate::with_fixture;

/// Several files in one call: a glob or `file_paths`, their rows together in order (with
/// `source_file` on request), tables with the same columns only; with `batch_size`, batches
/// run across the files. Globs stay inside the roots.
#[tokio::test]
async fn rows_of_several_files_go_together_and_globs_stay_inside_the_roots() {
    let ctx = with_fixture();
    let data = ctx.root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("2026-01.csv"), "id,name\n1,a\n2,b\n3,c\n").unwrap();
    std::fs::write(data.join("2026-02.csv"), "id,name\n4,d\n5,e\n").unwrap();
    std::fs::write(data.join("2025-12.csv"), "id,name\n0,z\n").unwrap();
    std::fs::write(data.join("other.csv"), "id,title\n9,x\n").unwrap();
    std::fs::write(data.join("a.jsonl"), "{\"n\":1}\n{\"n\":2}\n").unwrap();
    std::fs::write(data.join("b.jsonl"), "{\"n\":3}\n").unwrap();
    let outside = ctx.root.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("2026-09.csv"), "id,name\n99,secret\n").unwrap();
    let client = ctx.client().await;

    let r = with_file(
        &client,
        json!({"file_path": "data/2026-*.csv", "data_key": "rows", "source_file": true}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["rows"], 5, "{s}");
    assert_eq!(s["first"]["id"], 1);
    assert!(
        s["first"]["source_file"]
            .as_str()
            .unwrap()
            .ends_with("data/2026-01.csv"),
        "{s}"
    );
    assert_eq!(s["last"]["id"], 5);
    assert!(
        s["last"]["source_file"]
            .as_str()
            .unwrap()
            .ends_with("data/2026-02.csv"),
        "{s}"
    );

    let r = with_file(
        &client,
        json!({"file_paths": ["data/b.jsonl", "data/a.jsonl"], "data_key": "rows"}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        (s["rows"].clone(), s["first"].clone(), s["last"].clone()),
        (json!(3), json!({"n": 3}), json!({"n": 2})),
        "in the order given: {s}"
    );

    // Across files in batches of 2: [1,2] [3,4] [5].
    let r = with_file(
        &client,
        json!({"file_path": "data/2026-*.csv", "data_key": "rows", "batch_size": 2, "source_file": true}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        (
            s["batches"].clone(),
            s["items"].clone(),
            s["succeeded"].clone()
        ),
        (json!(3), json!(5), json!(3)),
        "{s}"
    );
    let last = &s["last_result"]["structuredContent"];
    assert_eq!(last["rows"], 1, "{s}");
    assert!(
        last["first"]["source_file"]
            .as_str()
            .unwrap()
            .ends_with("2026-02.csv"),
        "{s}"
    );
    assert!(text(&r).contains("from 2 files"), "{}", text(&r));

    // Tables that go together need the same columns.
    for args in [
        json!({"file_paths": ["data/2026-01.csv", "data/other.csv"], "data_key": "rows"}),
        json!({"file_paths": ["data/2026-01.csv", "data/other.csv"], "data_key": "rows", "batch_size": 100}),
    ] {
        let r = with_file(&client, args).await;
        assert!(
            text(&r).contains("same columns") && text(&r).contains("other.csv"),
            "{}",
            text(&r)
        );
    }

    // Globs and lists stay inside the roots; one that matches nothing says so.
    for (args, code) in [
        (
            json!({"file_path": "../elsewhere/*.csv", "data_key": "rows"}),
            "path_outside_roots",
        ),
        (
            json!({"file_path": format!("{}/*.csv", outside.display()), "data_key": "rows"}),
            "path_outside_roots",
        ),
        (
            json!({"file_paths": ["data/2026-01.csv", outside.join("2026-09.csv")], "data_key": "rows"}),
            "path_outside_roots",
        ),
        (
            json!({"file_paths": ["data/2026-01.csv", outside.join("2026-09.csv")], "data_key": "rows", "batch_size": 1}),
            "path_outside_roots",
        ),
        (
            json!({"file_path": "data/*.parquet", "data_key": "rows"}),
            "path_not_found",
        ),
        (
            json!({"file_path": "data/a.jsonl", "file_paths": ["data/b.jsonl"], "data_key": "rows"}),
            "invalid_arguments",
        ),
        (
            json!({"file_paths": ["data/a.jsonl", "data/b.jsonl"]}),
            "invalid_arguments",
        ),
    ] {
        let r = with_file(&client, args.clone()).await;
        assert_eq!(error_code(&r), code, "{args}: {}", text(&r));
        assert!(!text(&r).contains("secret"), "{}", text(&r));
    }
    client.cancel().await.unwrap();
}
