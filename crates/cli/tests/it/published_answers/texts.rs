//! Texts published servers answer, stored as text and read by lines.

use offload_testkit::{TestContext, call, structured, text};
use serde_json::json;

use crate::interop::interop_dir;
use crate::published::node_server;

/// A repository of `n` commits, made at once with `git fast-import`.
fn repo_with_commits(dir: &std::path::Path, n: usize) {
    use std::io::Write;
    let run = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    std::fs::create_dir_all(dir).unwrap();
    run(&["init", "-q", "-b", "main"]);
    let mut stream = String::new();
    for i in 0..n {
        let message = format!("change number {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{}\ncommitter Ann <ann@example.com> {} +0000\ndata {}\n{message}",
            i + 1,
            1_700_000_000 + i,
            message.len()
        ));
        if i > 0 {
            stream.push_str(&format!("from :{i}\n"));
        }
        stream.push_str(&format!(
            "M 644 inline f.txt\ndata {}\n{i}\n\n",
            format!("{i}\n").len()
        ));
    }
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    run(&["reset", "-q", "--hard", "main"]);
}

/// Text answers of published servers — mcp-server-git's `git_log`, server-filesystem's
/// `{content: "<text>"}` — over the inline budget are stored as the text (`.txt`, `.md` for a
/// document), so `read_file` pages them by lines and the summary counts true lines; the model
/// gets a preview of at most 4 KiB with the way to read on (issue 53).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn text_answers_are_stored_as_text_and_read_by_lines() {
    let ctx = TestContext::new();
    let repo = ctx.tmp.path().join("repo");
    repo_with_commits(&repo, 2000);
    let docs = ctx.root.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let mut guide = String::from("# Guide\n\nHow to use it.\n");
    for i in 0..300 {
        guide.push_str(&format!(
            "\n## Step {i}\n\nDo \"thing\" number {i}, then check it.\n"
        ));
    }
    std::fs::write(docs.join("guide.md"), &guide).unwrap();
    ctx.write_servers(json!({
        "git": {"command": interop_dir().join(".venv/bin/mcp-server-git"), "args": ["--repository", repo]},
        "fs": node_server("server-filesystem", &[docs.to_str().unwrap()]),
    }));
    let client = ctx.client().await;

    // git_log: over the budget, stored as text; its lines are the server's lines.
    let direct = call(
        &client,
        "call_tool",
        json!({"server": "git", "tool_name": "git_log", "tool_args": {"repo_path": repo, "max_count": 3}}),
    )
    .await;
    let small = text(&direct);
    assert!(small.contains("change number 1999"), "{small}");
    let r = call(
        &client,
        "call_tool",
        json!({"server": "git", "tool_name": "git_log", "tool_args": {"repo_path": repo, "max_count": 2000}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let answer = structured(&r).clone();
    let path = answer["path"].as_str().unwrap().to_owned();
    assert!(path.ends_with(".txt"), "{answer}");
    assert_eq!(answer["summary"]["kind"], "text");
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        stored.starts_with(small.lines().next().unwrap()),
        "{}",
        &stored[..200]
    );
    assert!(!stored.contains("\\n"), "no JSON escapes");
    assert_eq!(answer["summary"]["lines"], stored.lines().count());
    assert!(
        stored.lines().count() > 2000 * 3,
        "a line per field of each commit"
    );
    // What reaches the model: the link, summary, preview and next step, within 4 KiB.
    let told = text(&r);
    assert!(told.len() <= 4096, "{}", told.len());
    assert!(
        told.contains("First lines:") && told.contains("change number 1999"),
        "{told}"
    );
    assert!(told.contains("read_file"), "{told}");
    // Read by lines, as a person would: the lines of the 1000th commit from the end.
    let line = stored
        .lines()
        .position(|l| l.contains("change number 999"))
        .unwrap();
    let page = call(
        &client,
        "read_file",
        json!({"path": path, "offset": line, "length": 1}),
    )
    .await;
    let page = offload_testkit::page(&page);
    assert!(
        page["content"]
            .as_str()
            .unwrap()
            .contains("change number 999"),
        "{page}"
    );

    // server-filesystem's {content: "<text>"} of a Markdown document: stored as .md, its
    // headings in the preview.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fs", "tool_name": "read_text_file", "tool_args": {"path": docs.join("guide.md")}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let answer = structured(&r).clone();
    let path = answer["path"].as_str().unwrap().to_owned();
    assert!(path.ends_with(".md"), "{answer}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), guide);
    let told = text(&r);
    assert!(told.len() <= 4096, "{}", told.len());
    assert!(
        told.contains("Headings (line: heading):\n1: # Guide\n5: ## Step 0\n"),
        "{told}"
    );
    let page = call(
        &client,
        "read_file",
        json!({"path": path, "offset": 4, "length": 1}),
    )
    .await;
    assert_eq!(
        offload_testkit::page(&page)["content"]
            .as_str()
            .unwrap()
            .trim_end(),
        "## Step 0"
    );
    client.cancel().await.unwrap();
}

/// A web page as mcp-server-fetch and markitdown-mcp answer it — Markdown text, 60 KB — started
/// with `uvx` as their READMEs show, confined by default (the fetcher given the page's host): stored
/// as `.md` byte for byte what the server said, its headings in the preview, and read back by
/// lines at a heading (issue 53: stored as one JSON string, read as one line).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn pages_as_fetch_and_markitdown_answer_them_are_stored_as_markdown() {
    let ctx = TestContext::new();
    let mut html =
        String::from("<html><head><title>Field guide</title></head><body><h1>Field guide</h1>\n");
    for i in 0..400 {
        html.push_str(&format!(
            "<h2>Section {i}</h2>\n<p>Walk {i} steps north, then look for the marker numbered {i}; \
             write down what you see and the time.</p>\n"
        ));
    }
    html.push_str("</body></html>\n");
    std::fs::write(ctx.root.join("guide.html"), &html).unwrap();
    let port = offload_testkit::free_port();
    let _pages = offload_testkit::ServedDir::start(&ctx.root, port);
    let uvx = interop_dir().join(".venv/bin/uvx");
    ctx.write_servers(json!({
        "fetch": {"command": uvx, "args": ["mcp-server-fetch@2026.10.24", "--allow-private-ips"],
                  "sandbox": {"network": {"allow": [format!("127.0.0.1:{port}")]}}},
        "markitdown": {"command": uvx, "args": ["markitdown-mcp@0.0.1a8"]},
    }));
    let client = ctx.client().await;
    let url = format!("http://127.0.0.1:{port}/guide.html");
    let asks = [
        ("fetch", "fetch", json!({"url": url, "max_length": 200_000})),
        (
            "markitdown",
            "convert_to_markdown",
            json!({"uri": format!("file://{}", ctx.root.join("guide.html").display())}),
        ),
    ];
    for (server, tool, args) in asks {
        // A first call may find the server still downloading: asked again, as a model is told.
        let within = std::time::Duration::from_secs(240);
        let r = offload_testkit::call_once_started(&client, server, tool, &args, within).await;
        assert_ne!(
            r.is_error,
            Some(true),
            "{server}: {}\n{}",
            text(&r),
            ctx.log()
        );
        let answer = structured(&r).clone();
        let path = answer["path"].as_str().unwrap().to_owned();
        assert!(path.ends_with(".md"), "{server}: {answer}");
        let stored = std::fs::read_to_string(&path).unwrap();
        assert!(!stored.contains("\\n"), "{server}: no JSON escapes");
        assert!(stored.len() > 40_000, "{server}: {}", stored.len());
        assert_eq!(
            answer["summary"]["lines"],
            stored.lines().count(),
            "{server}"
        );
        let told = text(&r);
        assert!(told.len() <= 4096, "{server}: {}", told.len());
        assert!(told.contains("Section 1"), "{server}: the headings: {told}");
        // Read by lines at a heading, exactly the stored line.
        let line = stored
            .lines()
            .position(|l| l.contains("Section 250") && l.starts_with('#'))
            .unwrap_or_else(|| panic!("{server}: no heading in {:.600}", stored));
        let page = call(
            &client,
            "read_file",
            json!({"path": path, "offset": line, "length": 3}),
        )
        .await;
        let page = offload_testkit::page(&page);
        assert_eq!(
            page["content"].as_str().unwrap().lines().next(),
            stored.lines().nth(line),
            "{server}"
        );
        assert_eq!(page["total"], stored.lines().count(), "{server}");
    }
    client.cancel().await.unwrap();
}
