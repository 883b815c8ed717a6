//! jq programs over JSON, JSON lines and YAML.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;

#[test]
fn jq_over_json_jsonl_and_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let a = run_jq(
        "[.items[] | select(.n > 1) | .name]",
        JqInput::Json(file(
            &dir,
            "a.json",
            r#"{"items":[{"name":"a","n":1},{"name":"b","n":2}]}"#,
        )),
        100,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(a.results, vec![json!(["b"])]);
    let a = run_jq(
        ".n",
        JqInput::Jsonl(file(&dir, "a.jsonl", "{\"n\":1}\n\n{\"n\":2}\n{\"n\":3}\n")),
        2,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(
        (a.results, a.count, a.truncated),
        (vec![json!(1), json!(2)], 3, true)
    );
    let a = run_jq(
        ".a.b | length",
        JqInput::Yaml(file(&dir, "a.yaml", "a:\n  b: [1, 2, 3]\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(a.results, vec![json!(3)]);
    let e = run_jq(
        ".a | nosuch",
        JqInput::Yaml(file(&dir, "b.yaml", "a: 1\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("undefined")
            && e.to_string().contains("nosuch")
            && e.to_string().contains("column 6"),
        "{e}"
    );
    let e = run_jq(
        ".a | (",
        JqInput::Yaml(file(&dir, "c.yaml", "a: 1\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("jq syntax"), "{e}");
    let e = run_jq(
        ".",
        JqInput::Json(file(&dir, "big.json", "[1,2,3]")),
        10,
        1 << 20,
        3,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().contains("up to 3 bytes"), "{e}");
    let e = run_jq(
        ".",
        JqInput::Jsonl(file(&dir, "bad.jsonl", "{\"a\":1}\nnot json\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
}
