//! A hostile server in three runtimes — Python (the official SDK), Node (the official TypeScript
//! SDK) and a native program (rmcp) — tries, through `offload mcp` in the default exposure mode
//! and reached by a real MCP client, everything a compromised server would. Each attempt is made
//! by the same server twice: confined by default (`"sandbox"` left out but for a memory limit),
//! and with `"sandbox": "off"`, the positive control that shows the attempt works when nothing
//! stops it. What the confined one may do — its roots, its state directory — is checked too.
//! The README's "attempts, escapes" figures are this test's counts.
//!
//! Fork bombs are proven at the launcher (`sandbox.rs`): this suite runs as root, which no
//! process limit holds.

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;

use offload_testkit::{TestContext, call, interop_dir, target_bin, text};
use serde_json::{Value, json};

/// How one runtime's hostile server is started.
fn runtime(name: &str) -> Value {
    let interop = interop_dir();
    match name {
        "python" => json!({
            "command": interop.join(".venv/bin/python"),
            "args": [interop.join("hostile_server.py")],
        }),
        "node" => json!({"command": "node", "args": [interop.join("hostile_server.mjs")]}),
        "native" => json!({"command": target_bin("offload-hostile")}),
        _ => unreachable!("three runtimes"),
    }
}

/// Has `server`'s hostile server make one attempt; its answer.
async fn attempt(client: &offload_testkit::Client, server: &str, args: Value) -> String {
    let answer = call(
        client,
        "call_tool",
        json!({"server": server, "tool_name": "attempt", "tool_args": args}),
    )
    .await;
    text(&answer)
}

fn with(mut entry: Value, sandbox: Value) -> Value {
    entry["sandbox"] = sandbox;
    entry
}

/// Runs every attempt against `name`'s server confined and unconfined; the number made.
async fn attempts_of(name: &str) -> usize {
    let ctx = TestContext::new();
    // A root that holds secrets: the whole home, with an SSH key in it; Offload's config beside.
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    let key = ctx.home.join(".ssh/id_rsa");
    std::fs::write(&key, "PRIVATE KEY").unwrap();
    std::fs::write(ctx.home.join("notes.txt"), "my notes").unwrap();
    std::fs::write(ctx.root.join("data.txt"), "in the root").unwrap();
    std::fs::create_dir_all(ctx.root.join(".git/hooks")).unwrap();
    let link = ctx.root.join("key-link");
    std::os::unix::fs::symlink(&key, &link).unwrap();
    let agent = ctx.root.join("agent.sock");
    let _agent = UnixListener::bind(&agent).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = ctx.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    ctx.write_config(json!({
        "roots": [ctx.root, ctx.home],
        "mcpServers": {
            "jail": with(runtime(name), json!({"memory_mb": 1024})),
            "open": with(runtime(name), json!("off")),
        },
    }));
    let client = ctx.client().await;
    let ask = |server: &'static str, args: Value| attempt(&client, server, args);

    // Granted: its roots, read and written (one holds the home, around its secrets), and its
    // own state directory as HOME and TMPDIR.
    for (args, says) in [
        (
            json!({"kind": "read", "path": ctx.root.join("data.txt")}),
            "ok: in the root",
        ),
        (
            json!({"kind": "read", "path": ctx.home.join("notes.txt")}),
            "ok: my notes",
        ),
        (
            json!({"kind": "write", "path": ctx.root.join("new.txt")}),
            "ok",
        ),
    ] {
        let answer = ask("jail", args.clone()).await;
        assert!(
            answer.contains(says),
            "{name} {args}: {answer}\n{}",
            ctx.log()
        );
    }
    let state = ctx.home.join(".local/share/offload/servers/jail");
    let state = state.display();
    assert!(
        ask("jail", json!({"kind": "where"}))
            .await
            .contains(&format!("ok: {state} {state}"))
    );

    let moved: PathBuf = outside.join("moved.txt");
    let mut attempts = vec![
        ("read an SSH key", json!({"kind": "read", "path": key})),
        (
            "read Offload's config",
            json!({"kind": "read", "path": ctx.config_path}),
        ),
        (
            "read a key through a symlink in the root",
            json!({"kind": "read", "path": link}),
        ),
        (
            "write outside the roots",
            json!({"kind": "write", "path": outside.join("x")}),
        ),
        (
            "write ~/.bashrc",
            json!({"kind": "write", "path": ctx.home.join(".bashrc")}),
        ),
        (
            "write a git hook in the root",
            json!({"kind": "write", "path": ctx.root.join(".git/hooks/pre-commit")}),
        ),
        (
            "hard-link a key into the root",
            json!({"kind": "link", "path": key, "to": ctx.root.join("stolen")}),
        ),
        (
            "move a file out of the root",
            json!({"kind": "rename", "path": ctx.root.join("data.txt"), "to": moved}),
        ),
        (
            "TCP to a loopback port",
            json!({"kind": "tcp", "port": port}),
        ),
        (
            "UDP to a loopback port",
            json!({"kind": "udp", "port": port}),
        ),
        (
            "connect to an agent's unix socket",
            json!({"kind": "unix", "path": agent}),
        ),
        ("read Offload's environment", json!({"kind": "environ"})),
        ("signal Offload", json!({"kind": "signal"})),
        (
            "allocate 2 GB (limit 1 GB)",
            json!({"kind": "memory", "mb": 2048}),
        ),
    ];
    if name != "node" {
        attempts.push(("ptrace", json!({"kind": "ptrace"})));
    }
    // The parent of a server in a process namespace of its own is that namespace's first
    // process, whose environment is the server's own: reading it reads nothing of Offload's.
    let own_environment = format!("HOME={state}");
    for (what, args) in &attempts {
        let jailed = ask("jail", args.clone()).await;
        let held = jailed.starts_with("refused")
            || (args["kind"] == "environ" && jailed.contains(&own_environment));
        assert!(held, "{name}: {what} escaped: {jailed}\n{}", ctx.log());
        eprintln!("{name}: {what}: {jailed}");
        let control = ask("open", args.clone()).await;
        assert!(
            control.starts_with("ok"),
            "{name}: the control of {what} failed, so its refusal proves nothing: {control}"
        );
    }
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "PRIVATE KEY");
    client.cancel().await.unwrap();
    eprintln!("{name}: {} attempts, 0 escapes", attempts.len());
    attempts.len()
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_hostile_python_server_escapes_nothing() {
    assert_eq!(attempts_of("python").await, 15);
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_hostile_node_server_escapes_nothing() {
    assert_eq!(attempts_of("node").await, 14);
}

#[tokio::test]
async fn a_hostile_native_server_escapes_nothing() {
    assert_eq!(attempts_of("native").await, 15);
}

/// Waits up to 10 s for `check` to hold.
fn eventually(check: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    check()
}

/// `name`'s server named a data file in the home folder (not a root) and a program inside a
/// package: it saves the file by a temporary file renamed over it, and reaches nothing else
/// there. Each attempt is judged by what happened on disk — a write to the folder lands in the
/// server's private folder, so an "ok" from the server proves nothing — and made again with
/// `"sandbox": "off"`, where it must change the real folder. The number of attempts.
async fn saving_attempts_of(name: &str) -> usize {
    let ctx = TestContext::new();
    let home = &ctx.home;
    let data = home.join("data.json");
    std::fs::write(&data, "{}").unwrap();
    std::fs::write(home.join("notes.txt"), "mine").unwrap();
    // A browser inside a package, named as READMEs do (`--executable-path ...`).
    let package = ctx.work.join("node_modules/browser");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("chrome"), "#!/bin/sh\n").unwrap();
    // The server's own code: the folder of its script, or of its program.
    let own = match name {
        "native" => target_bin("offload-hostile").parent().unwrap().to_owned(),
        _ => interop_dir(),
    };
    let planted_in_own = own.join(format!("planted-by-hostile-{}.txt", std::process::id()));
    let entry = |sandbox: Value| {
        let mut entry = with(runtime(name), sandbox);
        entry["env"] = json!({"DATA_FILE": data, "BROWSER": package.join("chrome")});
        entry
    };
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {
            "jail": entry(json!({"memory_mb": 1024})),
            "open": entry(json!("off")),
        },
    }));
    let client = ctx.client().await;
    let ask = |server: &'static str, args: Value| attempt(&client, server, args);
    let temp = home.join("data.json.1a2b.tmp");
    // Allowed: the named file saved by a temporary file renamed over it, where the user named it.
    for args in [
        json!({"kind": "write", "path": temp}),
        json!({"kind": "rename", "path": temp, "to": data}),
    ] {
        let answer = ask("jail", args.clone()).await;
        assert!(
            answer.starts_with("ok"),
            "{name} {args}: {answer}\n{}",
            ctx.log()
        );
    }
    assert!(
        eventually(|| std::fs::read_to_string(&data).is_ok_and(|t| t == "x")),
        "{name}: the save did not reach the user's file\n{}",
        ctx.log()
    );

    let rc = home.join(".bashrc");
    let rc_temp = home.join("rc.tmp");
    let read = |p: &PathBuf| std::fs::read_to_string(p).ok();
    // (what, the attempt, whether it happened on disk)
    type Happened<'a> = Box<dyn Fn() -> bool + 'a>;
    let attempts: Vec<(&str, Vec<Value>, Happened)> = vec![
        (
            "read a file beside the named one",
            vec![json!({"kind": "read", "path": home.join("notes.txt")})],
            Box::new(|| false), // judged by the answer below
        ),
        (
            "write a file beside the named one",
            vec![json!({"kind": "write", "path": home.join("notes.txt")})],
            Box::new(|| read(&home.join("notes.txt")).as_deref() == Some("x")),
        ),
        (
            "plant ~/.bashrc through a temporary file renamed",
            vec![
                json!({"kind": "write", "path": rc_temp}),
                json!({"kind": "rename", "path": rc_temp, "to": rc}),
            ],
            Box::new(|| rc.exists()),
        ),
        (
            "write into a named program's folder",
            vec![json!({"kind": "write", "path": package.join("planted")})],
            Box::new(|| package.join("planted").exists()),
        ),
        (
            "write into the server's own code",
            vec![json!({"kind": "write", "path": planted_in_own})],
            Box::new(|| planted_in_own.exists()),
        ),
    ];
    for (what, steps, happened) in &attempts {
        let mut answers = Vec::new();
        for step in steps {
            answers.push(ask("jail", step.clone()).await);
        }
        assert!(
            !happened(),
            "{name}: {what} escaped: {answers:?}\n{}",
            ctx.log()
        );
        if what.starts_with("read") {
            assert!(
                answers[0].starts_with("refused"),
                "{name}: {what}: {answers:?}"
            );
        }
        eprintln!("{name}: {what}: {answers:?}");
        let mut controls = Vec::new();
        for step in steps {
            controls.push(ask("open", step.clone()).await);
        }
        let worked = if what.starts_with("read") {
            controls[0] == "ok: mine"
        } else {
            happened()
        };
        assert!(
            worked,
            "{name}: the control of {what} failed, so its refusal proves nothing: {controls:?}"
        );
    }
    client.cancel().await.unwrap();
    let _ = std::fs::remove_file(&planted_in_own);
    eprintln!(
        "{name}: {} attempts beside a named file, 0 escapes",
        attempts.len()
    );
    attempts.len()
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_hostile_python_server_saving_in_the_home_folder_reaches_nothing_else_there() {
    assert_eq!(saving_attempts_of("python").await, 5);
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_hostile_node_server_saving_in_the_home_folder_reaches_nothing_else_there() {
    assert_eq!(saving_attempts_of("node").await, 5);
}

#[tokio::test]
async fn a_hostile_native_server_saving_in_the_home_folder_reaches_nothing_else_there() {
    assert_eq!(saving_attempts_of("native").await, 5);
}

/// A web server on loopback answering every request with `hello`.
fn origin() -> u16 {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    port
}

/// `"network": {"allow": [...]}` through `offload mcp`, as a client meets it: the Python-SDK
/// server reaches the host it names through its proxy — by name only — and nothing else, not
/// even that host's port directly; each refusal is done by the same server unconfined.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn an_allow_list_reaches_the_hosts_it_names_through_the_proxy_and_nothing_else() {
    let ctx = TestContext::new();
    let (allowed, other) = (origin(), origin());
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {
            "jail": with(runtime("python"), json!({"network": {"allow": [format!("localhost:{allowed}")]}})),
            "open": with(runtime("python"), json!("off")),
        },
    }));
    let client = ctx.client().await;
    let ask = |server: &'static str, args: Value| attempt(&client, server, args);
    let fetch = |url: String| json!({"kind": "fetch", "path": url});
    let through = ask("jail", fetch(format!("http://localhost:{allowed}/"))).await;
    assert_eq!(through, "ok: hello", "{}", ctx.log());
    for (what, args) in [
        (
            "the allowed host by its address",
            fetch(format!("http://127.0.0.1:{allowed}/")),
        ),
        ("another port", fetch(format!("http://localhost:{other}/"))),
        (
            "the allowed port, around the proxy",
            json!({"kind": "tcp", "port": allowed}),
        ),
    ] {
        let jailed = ask("jail", args.clone()).await;
        assert!(jailed.starts_with("refused"), "{what}: {jailed}");
        let control = ask("open", args).await;
        assert!(
            control.starts_with("ok"),
            "the control of {what}: {control}"
        );
    }
    // The refusal names the host to add, in the log.
    let log = ctx.log();
    assert!(
        log.contains(&format!(
            "network: refused 127.0.0.1:{allowed}, not in this server's allow-list"
        )),
        "{log}"
    );
    client.cancel().await.unwrap();
}
