//! The escape corpus: attempts to read or write outside the allowed directories through every
//! path-taking parameter of every tool (`path` of the file tools, `file_path` and its globs,
//! `file_paths`, `$file`, `storage_path`, `filename`), through a real `offload mcp` session. Every attempt must be
//! refused with a path error, no answer may carry the outside file's content, and nothing may be
//! written outside (checked on disk afterwards). `cargo test -p offload-cli --test it escape --
//! --nocapture` prints the count.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use offload_testkit::{TestContext, call, error_code, text};
use serde_json::{Value, json};

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

/// A file inside the root swapped for a symlink to the outside file, back and forth, while the
/// tools read it: every answer is the inside file or a refusal, never the outside content.
#[cfg(unix)]
#[tokio::test]
async fn a_symlink_swapped_in_between_check_and_use_never_leaks() {
    let c = corpus();
    let target = c.ctx.root.join("swapped.txt");
    std::fs::write(&target, "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapped = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let swapper = {
        let stop = stop.clone();
        let swapped = swapped.clone();
        let target = target.clone();
        let secret = c.outside.join("secret.txt");
        let staged_link = c.ctx.root.join(".staged-link");
        let staged_file = c.ctx.root.join(".staged-file");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&staged_link);
                std::os::unix::fs::symlink(&secret, &staged_link).unwrap();
                std::fs::rename(&staged_link, &target).unwrap();
                std::fs::write(&staged_file, "inside").unwrap();
                std::fs::rename(&staged_file, &target).unwrap();
                swaps += 1;
                swapped.store(swaps, Ordering::Relaxed);
            }
            swaps
        })
    };
    let client = c.ctx.client().await;
    let path = target.display().to_string();
    let mut leaks = Vec::new();
    let mut answered = 0;
    // At least 300 reads, and on until the swapper has had its turn (on a busy machine the thread
    // may get little time): a race that did not run proves nothing.
    let mut i = 0;
    while i < 300 || (swapped.load(Ordering::Relaxed) <= 100 && i < 5000) {
        i += 1;
        let (tool, args) = match i % 3 {
            0 => ("read_file", json!({"path": path})),
            1 => ("summarize_file", json!({"path": path})),
            _ => (
                "call_tool",
                json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": path}}}),
            ),
        };
        let r = call(&client, tool, args).await;
        if text(&r).contains(SECRET) {
            leaks.push(format!("{tool}: {}", text(&r)));
        }
        if r.is_error != Some(true) {
            answered += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(leaks.is_empty(), "{leaks:?}");
    assert!(swaps > 100, "the race ran ({swaps} swaps in {i} reads)");
    eprintln!(
        "symlink race: {i} reads during {swaps} swaps, {answered} answered with the inside file, 0 leaks"
    );
    client.cancel().await.unwrap();
}

/// The corpus for bucket roots, against a real S3 server: keys beside, above and around the
/// root's prefix, dot segments, doubled slashes, backslashes and percent-encoded bytes, through
/// the file tools' `path` and the stores' `storage_path`. Nothing outside the prefix is read, and
/// nothing is written outside it (the bucket is listed before and after).
#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn bucket_escape_attempts_are_refused_and_nothing_outside_the_prefix_is_touched() {
    use offload_testkit::s3::{BUCKET, Weed};
    let weed = Weed::get().await;
    let prefix = weed.prefix("escape");
    let ctx = TestContext::new();
    std::fs::write(ctx.root.join("inside.csv"), "a,b\n1,2\n").unwrap();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(&format!("{prefix}/root"), true)],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    for key in [
        "root-evil/secret.txt",
        "secret.txt",
        "other/root/secret.txt",
        "root/../secret.txt",
    ] {
        weed.put(&format!("{prefix}/{key}"), SECRET.as_bytes().to_vec())
            .await;
    }
    weed.put(&format!("{prefix}/root/inside.txt"), b"inside\n".to_vec())
        .await;
    let outside_keys = |keys: Vec<String>| -> Vec<String> {
        keys.into_iter()
            .filter(|k| !k.starts_with(&format!("{prefix}/root/")))
            .collect()
    };
    let before = outside_keys(weed.list(&prefix).await);
    let root = format!("s3://{BUCKET}/{prefix}/root");
    let base = format!("s3://{BUCKET}/{prefix}");
    const OUT: &[&str] = &["path_outside_roots"];
    const UNUSABLE: &[&str] = &["path_unusable"];
    let reads: Vec<(String, &[&str])> = vec![
        (format!("{base}/secret.txt"), OUT),
        (format!("{base}/root-evil/secret.txt"), OUT),
        (format!("{base}/other/root/secret.txt"), OUT),
        (format!("s3://{BUCKET}-other/{prefix}/root/inside.txt"), OUT),
        (
            format!("s3://{}/{prefix}/root/inside.txt", BUCKET.to_uppercase()),
            OUT,
        ),
        (format!("gs://{BUCKET}/{prefix}/root/inside.txt"), OUT),
        (format!("az://{BUCKET}/{prefix}/root/inside.txt"), OUT),
        (format!("{root}/../secret.txt"), UNUSABLE),
        (format!("{root}/sub/../../secret.txt"), UNUSABLE),
        (format!("{root}/./../secret.txt"), UNUSABLE),
        (format!("{root}/%2e%2e/secret.txt"), UNUSABLE),
        (format!("{root}/%2E%2E/secret.txt"), UNUSABLE),
        (format!("{root}%2f..%2fsecret.txt"), UNUSABLE),
        (format!("{root}/..%2fsecret.txt"), UNUSABLE),
        (format!("{root}/..%5csecret.txt"), UNUSABLE),
        (format!("{root}/%252e%252e/secret.txt"), UNUSABLE),
        (format!("{root}\\..\\secret.txt"), UNUSABLE),
        (format!("{root}//../secret.txt"), UNUSABLE),
        (format!("{root}/inside.txt\0/../../secret.txt"), UNUSABLE),
        (
            format!("{root}/\u{2024}\u{2024}/secret.txt"),
            &["path_not_found"],
        ),
        (format!("{root}/..\u{2215}secret.txt"), &["path_not_found"]),
        (format!("s3://{BUCKET}/{prefix}/root@evil/secret.txt"), OUT),
        (format!("s3://{BUCKET}:443/{prefix}/root/inside.txt"), OUT),
        (format!("s3://user@{BUCKET}/{prefix}/root/inside.txt"), OUT),
    ];
    let writes: Vec<(String, &[&str])> = vec![
        (base.clone(), OUT),
        (format!("{base}/root-evil"), OUT),
        (format!("{root}/../root-evil"), UNUSABLE),
        (format!("{root}/%2e%2e"), UNUSABLE),
        (format!("{root}%2f..%2froot-evil"), UNUSABLE),
        (format!("s3://{BUCKET}-other/{prefix}/root"), OUT),
        // Offload's own records: a file stored there would be listed as a response.
        (format!("{root}/.offload/records"), UNUSABLE),
        (format!("{root}/.offload"), UNUSABLE),
    ];
    let client = ctx.client().await;
    let mut attempts = 0;
    let mut escapes = Vec::new();
    for (path, codes) in &reads {
        for (tool, param, args) in read_calls(path) {
            attempts += 1;
            let r = call(&client, tool, args).await;
            let code = code_of(&r);
            if !codes.contains(&code.as_str()) || text(&r).contains(SECRET) {
                escapes.push(format!("{tool} {param}={path:?}: {code} {:.200}", text(&r)));
            }
        }
    }
    for (place, codes) in &writes {
        for (tool, mut args) in [
            (
                "call_tool_and_store",
                json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "escape"}}),
            ),
            (
                "query_file",
                json!({"path": "inside.csv", "sql": "SELECT * FROM data"}),
            ),
        ] {
            attempts += 1;
            args["storage_path"] = json!(place);
            let r = call(&client, tool, args).await;
            let code = code_of(&r);
            if !codes.contains(&code.as_str()) {
                escapes.push(format!(
                    "{tool} storage_path={place:?}: {code} {:.200}",
                    text(&r)
                ));
            }
        }
    }
    // The object inside is readable: the refusals are about the paths.
    let r = call(
        &client,
        "read_file",
        json!({"path": format!("{root}/inside.txt")}),
    )
    .await;
    assert_eq!(code_of(&r), "ok", "{}", text(&r));
    assert!(
        escapes.is_empty(),
        "{} of {attempts} bucket attempts not refused as expected:\n{}",
        escapes.len(),
        escapes.join("\n")
    );
    assert_eq!(
        outside_keys(weed.list(&prefix).await),
        before,
        "nothing written outside the prefix"
    );
    eprintln!("bucket escape corpus: {attempts} attempts, 0 escapes");
    client.cancel().await.unwrap();
}
