//! The escape corpus: attempts to read or write outside the allowed directories through every
//! path-taking parameter of every tool (`path` of the file tools, `file_path` and its globs,
//! `file_paths`, `$file`, `storage_path`, `filename`), through a real `offload mcp` session. Every attempt must be
//! refused with a path error, no answer may carry the outside file's content, and nothing may be
//! written outside (checked on disk afterwards). `cargo test -p offload-cli --test it escape --
//! --nocapture` prints the count. The check-then-use race is in `race`, bucket roots in `buckets`.

use std::path::{Path, PathBuf};

use offload_testkit::{TestContext, call, error_code, text};
use serde_json::{Value, json};

mod buckets;
mod race;

const SECRET: &str = "TOP-SECRET-CONTENT";

/// The files under `dir`, recursively, with their content.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The error code of a refusal; `ok` for an answer that is not an error.
fn code_of(r: &rmcp::model::CallToolResult) -> String {
    if r.is_error == Some(true) {
        error_code(r)
    } else {
        "ok".into()
    }
}

struct Corpus {
    ctx: TestContext,
    outside: PathBuf,
    sibling: PathBuf,
    read_only: PathBuf,
}

fn corpus() -> Corpus {
    let ctx = TestContext::new();
    let base = ctx.tmp.path().to_owned();
    let outside = base.join("outside");
    // A directory whose name starts with the root's: `<root>-evil` passes a naive prefix check.
    let sibling = PathBuf::from(format!("{}-evil", ctx.root.display()));
    let read_only = base.join("shelf");
    for d in [&outside, &sibling, &read_only] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(sibling.join("secret.txt"), SECRET).unwrap();
    std::fs::write(read_only.join("kept.txt"), "kept").unwrap();
    std::fs::create_dir_all(ctx.root.join("sub")).unwrap();
    std::fs::write(ctx.root.join("inside.csv"), "a\n1\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("secret.txt"), ctx.root.join("link-file")).unwrap();
        std::os::unix::fs::symlink(&outside, ctx.root.join("link-dir")).unwrap();
        std::os::unix::fs::symlink(&sibling, ctx.root.join("sub/link-sibling")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), ctx.root.join("link-out.json"))
            .unwrap();
        // A hard link is the same file under a name in the root: only the user can make one
        // (Offload never creates links), so reading it is reading inside; writing must never
        // go through it.
        std::fs::hard_link(outside.join("secret.txt"), ctx.root.join("hard.json")).unwrap();
    }
    ctx.write_config(json!({
        "roots": [ctx.root, {"path": read_only, "writable": false}],
        "mcpServers": {"fx": TestContext::fixture(&[])},
    }));
    Corpus {
        ctx,
        outside,
        sibling,
        read_only,
    }
}

/// Paths that lead outside the roots, each with the codes a refusal may carry: outside (the
/// resolved path is outside), unusable (cannot be a path at all), or not found (a name that
/// stays inside the root and does not exist).
fn read_attempts(c: &Corpus) -> Vec<(String, &'static [&'static str])> {
    let root = c.ctx.root.display().to_string();
    let outside = c.outside.display().to_string();
    let sibling = c.sibling.display().to_string();
    const OUT: &[&str] = &["path_outside_roots"];
    const UNUSABLE: &[&str] = &["path_unusable", "path_outside_roots"];
    const STAYS_INSIDE: &[&str] = &["path_not_found"];
    let long = format!("{root}/{}", "a/".repeat(3000));
    vec![
        ("../outside/secret.txt".into(), OUT),
        ("sub/../../outside/secret.txt".into(), OUT),
        ("./../outside/secret.txt".into(), OUT),
        (format!("{root}/../outside/secret.txt"), OUT),
        (format!("{root}/sub/../../outside/secret.txt"), OUT),
        (format!("{root}/./sub/./../../outside/secret.txt"), OUT),
        (format!("{root}//..//outside//secret.txt"), OUT),
        (format!("{outside}/secret.txt"), OUT),
        (format!("{sibling}/secret.txt"), OUT),
        ("../".repeat(40) + "etc/passwd", OUT),
        ("/etc/passwd".into(), OUT),
        ("/proc/self/environ".into(), OUT),
        ("~/../outside/secret.txt".into(), OUT),
        ("~".into(), OUT),
        ("link-file".into(), OUT),
        (format!("{root}/link-file"), OUT),
        ("link-dir/secret.txt".into(), OUT),
        ("sub/link-sibling/secret.txt".into(), OUT),
        (
            format!("file://{outside}/secret.txt"),
            &["path_unusable", "path_not_found"],
        ),
        (
            format!("{root}/inside.csv\0/../../outside/secret.txt"),
            UNUSABLE,
        ),
        ("\0".into(), UNUSABLE),
        (long, &["path_unusable", "path_not_found"]),
        // Windows separators are ordinary characters here: the name stays in the root.
        ("..\\outside\\secret.txt".into(), STAYS_INSIDE),
        (
            format!("{root}\\..\\outside\\secret.txt"),
            &["path_outside_roots", "path_not_found"],
        ),
        // Look-alikes of `.` and `/` are ordinary characters too.
        ("\u{2024}\u{2024}/outside/secret.txt".into(), STAYS_INSIDE),
        ("..\u{2215}outside\u{2215}secret.txt".into(), STAYS_INSIDE),
        ("%2e%2e/outside/secret.txt".into(), STAYS_INSIDE),
        ("..%2foutside%2fsecret.txt".into(), STAYS_INSIDE),
    ]
}

/// The read attempt `path` through each read parameter: the file tools' `path`,
/// `call_tool_with_file_content`'s `file_path`, and a `$file` reference.
fn read_calls(path: &str) -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("get_file_schema", "path", json!({"path": path})),
        ("summarize_file", "path", json!({"path": path})),
        ("read_file", "path", json!({"path": path})),
        (
            "call_tool_with_file_content",
            "file_path",
            json!({"server": "fx", "tool_name": "received", "file_path": path, "data_key": "rows"}),
        ),
        (
            "call_tool",
            "$file",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": path}}}),
        ),
        (
            "call_tool_and_store",
            "$file",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": path, "as": "base64"}}}),
        ),
        (
            "query_file",
            "path",
            json!({"path": path, "sql": "SELECT * FROM data"}),
        ),
        (
            "query_file",
            "tables",
            json!({"path": "inside.csv", "sql": "SELECT * FROM t", "tables": {"t": path}}),
        ),
        ("query_file", "path (jq)", json!({"path": path, "jq": "."})),
    ]
}

/// SQL that tries to open a file itself: every one is a `query_error`, whatever the path.
fn sql_attempts(c: &Corpus) -> Vec<String> {
    let secret = c.outside.join("secret.txt").display().to_string();
    let inside = c.ctx.root.join("inside.csv").display().to_string();
    let mut out = Vec::new();
    for path in [secret.as_str(), inside.as_str(), "/etc/passwd"] {
        out.extend([
            format!("SELECT * FROM '{path}'"),
            format!("SELECT * FROM \"{path}\""),
            format!("SELECT * FROM \"file://{path}\""),
            format!("SELECT * FROM read_csv('{path}')"),
            format!("SELECT * FROM read_parquet('{path}')"),
            format!("SELECT * FROM read_json('{path}')"),
            format!("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{path}'"),
            format!("COPY (SELECT 1) TO '{path}.copy'"),
            format!("COPY data TO '{path}.copy' STORED AS CSV"),
            format!("INSERT INTO data SELECT * FROM '{path}'"),
        ]);
    }
    out.extend([
        "SELECT * FROM \"offload://files/t0.csv\"".to_owned(),
        "SELECT * FROM information_schema.tables".to_owned(),
        "SET datafusion.catalog.information_schema = true".to_owned(),
        "SELECT 1; SELECT * FROM data".to_owned(),
        "EXPLAIN SELECT * FROM data".to_owned(),
    ]);
    out
}

/// Globs (`call_tool_with_file_content`'s `file_path` and `file_paths`) that would match the
/// outside file if they were walked outside the roots, or followed a link out.
fn glob_attempts(c: &Corpus) -> Vec<(String, &'static [&'static str])> {
    let root = c.ctx.root.display().to_string();
    let outside = c.outside.display().to_string();
    let sibling = c.sibling.display().to_string();
    const OUT: &[&str] = &["path_outside_roots"];
    const UNUSABLE: &[&str] = &["path_unusable", "path_outside_roots"];
    // Walked inside only: the links to the outside are not followed, so nothing matches.
    const NOTHING: &[&str] = &["path_not_found"];
    vec![
        ("../outside/*".into(), OUT),
        ("../*/secret.txt".into(), OUT),
        ("../**/secret.txt".into(), OUT),
        ("sub/../../outside/*.txt".into(), OUT),
        (format!("{outside}/*"), OUT),
        (format!("{sibling}/*.txt"), OUT),
        (format!("{root}/../outside/*"), OUT),
        ("/etc/pass*".into(), OUT),
        ("~/*".into(), OUT),
        ("link-dir/*".into(), OUT),
        // A match that is a link to the outside file refuses the whole glob.
        ("link-*".into(), OUT),
        ("*".into(), OUT),
        ("*/../../outside/secret.txt".into(), UNUSABLE),
        ("sub/*/../../../outside/*".into(), UNUSABLE),
        ("**/secret.txt".into(), NOTHING),
        ("sub/**/secret.txt".into(), NOTHING),
        ("[".into(), UNUSABLE),
    ]
}

fn write_attempts(c: &Corpus) -> Vec<(Value, &'static [&'static str])> {
    let outside = c.outside.display().to_string();
    let sibling = c.sibling.display().to_string();
    let read_only = c.read_only.display().to_string();
    const OUT: &[&str] = &["path_outside_roots"];
    const BAD_NAME: &[&str] = &["invalid_arguments"];
    vec![
        (json!({"storage_path": "../outside"}), OUT),
        (json!({"storage_path": "sub/../../outside"}), OUT),
        (json!({"storage_path": outside}), OUT),
        (json!({"storage_path": sibling}), OUT),
        (json!({"storage_path": "link-dir"}), OUT),
        (json!({"storage_path": "link-dir/deeper"}), OUT),
        (json!({"storage_path": "~"}), OUT),
        (json!({"storage_path": "/tmp"}), OUT),
        (json!({"storage_path": read_only}), &["read_only_root"]),
        (
            json!({"storage_path": "\0"}),
            &["path_unusable", "path_outside_roots"],
        ),
        (json!({"filename": "../escape.json"}), BAD_NAME),
        (
            json!({"filename": format!("{outside}/escape.json")}),
            BAD_NAME,
        ),
        (json!({"filename": "sub/escape.json"}), BAD_NAME),
        (json!({"filename": ".."}), BAD_NAME),
        (json!({"filename": "."}), BAD_NAME),
        (json!({"filename": "..\\escape.json"}), BAD_NAME),
        (json!({"filename": "a\0b.json"}), BAD_NAME),
        // An existing name that is a link to the outside file: never written through.
        (json!({"filename": "link-out.json"}), &["file_exists"]),
        (json!({"filename": "hard.json"}), &["file_exists"]),
        (json!({"filename": "x".repeat(300)}), BAD_NAME),
        (
            json!({"filename": "escape.json", "storage_path": "link-dir"}),
            OUT,
        ),
    ]
}

#[tokio::test]
async fn every_escape_attempt_is_refused_and_nothing_outside_is_read_or_written() {
    let c = corpus();
    let before_outside = snapshot(&c.outside);
    let before_sibling = snapshot(&c.sibling);
    let before_shelf = snapshot(&c.read_only);
    let client = c.ctx.client().await;
    let mut attempts = 0;
    let mut escapes = Vec::new();

    for (path, codes) in read_attempts(&c) {
        for (tool, param, args) in read_calls(&path) {
            attempts += 1;
            let r = call(&client, tool, args).await;
            let code = code_of(&r);
            let answer = text(&r);
            if r.is_error != Some(true)
                || !codes.contains(&code.as_str())
                || answer.contains(SECRET)
            {
                escapes.push(format!("{tool} {param}={path:?}: {code} {answer:.200}"));
            }
        }
    }
    for (glob, codes) in glob_attempts(&c) {
        for extra in [
            json!({"file_path": glob}),
            json!({"file_paths": ["inside.csv", glob]}),
            json!({"file_path": glob, "batch_size": 1}),
        ] {
            attempts += 1;
            let mut args = json!({"server": "fx", "tool_name": "received", "data_key": "rows"});
            for (k, v) in extra.as_object().unwrap() {
                args[k] = v.clone();
            }
            let r = call(&client, "call_tool_with_file_content", args).await;
            let code = code_of(&r);
            let answer = text(&r);
            if r.is_error != Some(true)
                || !codes.contains(&code.as_str())
                || answer.contains(SECRET)
            {
                escapes.push(format!(
                    "call_tool_with_file_content {extra}: {code} {answer:.200}"
                ));
            }
        }
    }
    for sql in sql_attempts(&c) {
        attempts += 1;
        let r = call(
            &client,
            "query_file",
            json!({"path": "inside.csv", "sql": sql}),
        )
        .await;
        let code = code_of(&r);
        if code != "query_error" || text(&r).contains(SECRET) {
            escapes.push(format!("query_file sql={sql:?}: {code} {:.200}", text(&r)));
        }
    }
    for (extra, codes) in write_attempts(&c) {
        // The same places through query_file's store options.
        attempts += 1;
        let mut args = json!({"path": "inside.csv", "sql": "SELECT * FROM data"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let r = call(&client, "query_file", args).await;
        let code = code_of(&r);
        if r.is_error != Some(true) || !codes.contains(&code.as_str()) {
            escapes.push(format!("query_file {extra}: {code} {:.200}", text(&r)));
        }
        attempts += 1;
        let mut args =
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "escape"}});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let r = call(&client, "call_tool_and_store", args).await;
        let code = code_of(&r);
        if r.is_error != Some(true) || !codes.contains(&code.as_str()) {
            escapes.push(format!(
                "call_tool_and_store {extra}: {code} {:.200}",
                text(&r)
            ));
        }
    }

    assert!(
        escapes.is_empty(),
        "{} of {attempts} attempts not refused as expected:\n{}",
        escapes.len(),
        escapes.join("\n")
    );
    assert_eq!(
        snapshot(&c.outside),
        before_outside,
        "nothing written outside"
    );
    assert_eq!(
        snapshot(&c.sibling),
        before_sibling,
        "nothing written in the sibling"
    );
    assert_eq!(
        snapshot(&c.read_only),
        before_shelf,
        "nothing written in the read-only root"
    );
    assert!(attempts >= 30);
    eprintln!("escape corpus: {attempts} attempts, 0 escapes");
    client.cancel().await.unwrap();
}
