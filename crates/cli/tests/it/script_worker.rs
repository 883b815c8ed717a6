//! The script worker (`offload-script-worker`) as the engine will drive it: a real process on
//! real pipes, confined before it reads its script; the test answers its asks as the engine
//! would.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use offload_testkit::target_bin;
use serde_json::{Value, json};

/// Runs `code` in a worker; answers each ask with `answer`; the worker's last message and the
/// seccomp and no-new-privs state the kernel showed for it while it ran.
fn run(code: &str, answer: impl Fn(&Value) -> Value) -> (Value, String) {
    let mut worker = Command::new(target_bin("offload-script-worker"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut to = worker.stdin.take().unwrap();
    let mut from = BufReader::new(worker.stdout.take().unwrap());
    writeln!(
        to,
        "{}",
        json!({"run": {"code": code, "limits": {"deadline_ms": 2000}}})
    )
    .unwrap();
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            from.read_line(&mut line).unwrap() > 0,
            "the worker ended without an answer"
        );
        let message: Value = serde_json::from_str(&line).unwrap();
        if let Some(ask) = message.get("ask") {
            if seen.is_empty() {
                // Asked while it runs: the kernel's view of the worker now.
                seen = std::fs::read_to_string(format!("/proc/{}/status", worker.id()))
                    .unwrap_or_default();
            }
            let reply = answer(&ask["request"]);
            writeln!(
                to,
                "{}",
                json!({"answer": {"id": ask["id"], "value": reply}})
            )
            .unwrap();
            continue;
        }
        drop(to);
        worker.wait().unwrap();
        return (message, seen);
    }
}

#[test]
fn a_script_runs_in_a_confined_worker_and_its_calls_go_to_the_engine() {
    let (message, status) = run(
        r#"const a = await tools.fx.echo({ n: 2 });
           const rows = await offload.query("/data/x.csv", "select 1");
           console.log("got", a.n);
           return a.n * 21 + rows.length;"#,
        |request| match request["kind"].as_str() {
            Some("tool") => request["args"].clone(),
            Some("query") => json!([{"one": 1}]),
            other => panic!("unexpected {other:?}"),
        },
    );
    assert_eq!(message["done"]["result"], json!(43), "{message}");
    assert_eq!(message["done"]["logs"], json!(["got 2"]));
    let calls: Vec<&str> = message["done"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["tools.fx.echo", "offload.query"]);
    // While the script ran, the worker was under a seccomp filter, without new privileges.
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(field("NoNewPrivs:"), "1", "{status}");
    assert_eq!(field("Seccomp:"), "2", "{status}");
}

#[test]
fn a_failing_script_is_answered_typed_and_the_worker_survives_to_say_so() {
    let (message, _) = run("while (true) {}", |_| Value::Null);
    assert_eq!(message["failed"]["code"], "script_timeout", "{message}");
    let (message, _) = run("await tools.fx.echo({}); null.x;", |_| json!({}));
    assert_eq!(message["failed"]["code"], "script_error", "{message}");
    assert_eq!(message["failed"]["calls"].as_array().unwrap().len(), 1);
    // Not a run: refused with what to send.
    let out = Command::new(target_bin("offload-script-worker"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            writeln!(c.stdin.take().unwrap(), "hello")?;
            c.wait_with_output()
        })
        .unwrap();
    let said: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["failed"]["code"], "invalid_arguments");
}

/// One attempt by a worker, confined as for a script or not (the positive control).
fn attempt(what: &str, confined: bool) -> Value {
    let mut cmd = Command::new(target_bin("offload-script-worker"));
    cmd.args(["--probe", what]);
    if !confined {
        cmd.arg("--unconfined");
    }
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{what}: {out:?}");
    let line = String::from_utf8_lossy(&out.stdout);
    if line.trim().is_empty() {
        // `exec` that worked: the worker became the program.
        return json!({"attempt": what, "done": true, "replaced": true});
    }
    serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{what}: {e}: {line}"))
}

/// The escape corpus of the process scripts run in: each attempt done without confinement
/// (the positive control, so the attempt itself works on this machine) and refused with it.
#[test]
fn the_worker_cannot_read_write_connect_or_start_anything_and_still_runs_threads() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "do not read").unwrap();
    let written = dir.path().join("written.txt");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let socket = dir.path().join("agent.sock");
    let _unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let attempts = [
        format!("read:{}", secret.display()),
        "read:/etc/passwd".to_owned(),
        format!("write:{}", written.display()),
        format!("tcp:{port}"),
        format!("unix:{}", socket.display()),
        "spawn:/bin/true".to_owned(),
        "exec:/bin/true".to_owned(),
    ];
    let mut escapes = Vec::new();
    for what in &attempts {
        let open = attempt(what, false);
        assert_eq!(open["done"], true, "positive control: {open}");
        let confined = attempt(what, true);
        if confined["done"] != false {
            escapes.push(confined);
        }
    }
    assert!(escapes.is_empty(), "escaped: {escapes:?}");
    // New processes are refused before any program is looked at (the seccomp filter, not only
    // Landlock's execute right).
    let spawn = attempt("spawn:/bin/true", true);
    assert!(
        spawn["error"]
            .as_str()
            .unwrap()
            .contains("Operation not permitted"),
        "{spawn}"
    );
    // What a script needs still works inside.
    assert_eq!(attempt("thread", true)["done"], true);
    let _ = std::fs::remove_file(&written);
}
