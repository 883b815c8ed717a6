//! The launcher of confined servers (`offload sandbox-exec`) on the real kernel: a hostile
//! Python program tries what a compromised server would, and every attempt is made twice — under
//! a policy that denies it, and, as the positive control, under one that allows it — so a denial
//! is the sandbox's doing and not a broken attempt. Needs Landlock (ABI ≥ 4 for the TCP port
//! rules), which this project's CI machine has.

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use offload_testkit::target_bin;
use serde_json::{Value, json};

mod namespaces;

/// A world on disk: a granted root, secrets beside it, a loopback listener and a unix socket.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    secret: PathBuf,
    outside: PathBuf,
    python: PathBuf,
    python_home: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(outside.join(".ssh")).unwrap();
    let secret = outside.join(".ssh/id_rsa");
    std::fs::write(&secret, "PRIVATE KEY").unwrap();
    std::fs::write(root.join("data.txt"), "granted").unwrap();
    // The interpreter itself, not a shim (pyenv's shims are shell scripts).
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys; print(sys.executable); print(sys.base_prefix)",
        ])
        .output()
        .expect("python3");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let python = std::fs::canonicalize(lines.next().unwrap()).unwrap();
    let python_home = PathBuf::from(lines.next().unwrap());
    World {
        _dir: dir,
        root,
        secret,
        outside,
        python,
        python_home,
    }
}

/// What the runtime needs to start, read-only; `/dev/null` writable.
fn base(w: &World) -> Value {
    json!({
        "read": ["/usr", "/lib", "/lib64", "/etc", w.python_home, w.python.parent().unwrap()],
        "write": ["/dev/null"],
    })
}

fn with(mut policy: Value, change: Value) -> Value {
    for (k, v) in change.as_object().unwrap() {
        match (policy.get_mut(k), v) {
            (Some(Value::Array(have)), Value::Array(more)) => have.extend(more.iter().cloned()),
            _ => {
                policy[k] = v.clone();
            }
        }
    }
    policy
}

/// Runs `code` in Python under `policy` through `offload sandbox-exec`; its last line of
/// stdout, the exit code and stderr.
fn run(w: &World, policy: &Value, code: &str) -> (String, Option<i32>, String) {
    let mut launcher = Command::new(target_bin("offload"));
    launcher.arg("sandbox-exec");
    run_through(launcher, w, policy, code)
}

/// `run`, through `launcher` (a command that takes `--policy JSON -- PROGRAM ARGS`).
fn run_through(
    mut launcher: Command,
    w: &World,
    policy: &Value,
    code: &str,
) -> (String, Option<i32>, String) {
    let out = launcher
        .args(["--policy", &policy.to_string(), "--"])
        .arg(&w.python)
        .args(["-c", code])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    (
        stdout.lines().last().unwrap_or("").to_owned(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `attempt` (Python that prints `ok` or the error) denied — the server's root writable,
/// nothing else — and allowed, with `allowing` added to the same policy.
fn denied_then_allowed(w: &World, what: &str, attempt: &str, allowing: Value) {
    let code = format!(
        "try:\n{}\n    print('ok')\nexcept Exception as e:\n    print('refused', e)",
        indent(attempt)
    );
    let given = with(base(w), json!({"write": [w.root]}));
    let (denied, status, stderr) = run(w, &given, &code);
    assert_eq!(status, Some(0), "{what}: the program ran ({stderr})");
    assert!(
        denied.starts_with("refused"),
        "{what}: not refused: {denied} {stderr}"
    );
    let (allowed, _, stderr) = run(w, &with(given, allowing), &code);
    assert_eq!(
        allowed, "ok",
        "{what}: the positive control failed: {stderr}"
    );
}

fn indent(code: &str) -> String {
    code.lines().map(|l| format!("    {l}\n")).collect()
}

fn py(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

#[test]
fn files_outside_the_policy_are_out_of_reach_and_inside_it_work() {
    let w = world();
    let secret = py(&w.secret);
    denied_then_allowed(
        &w,
        "read a secret",
        &format!("open({secret}).read()"),
        json!({"read": [w.outside]}),
    );
    denied_then_allowed(
        &w,
        "write outside",
        &format!("open({}, 'w').write('x')", py(&w.outside.join(".bashrc"))),
        json!({"write": [w.outside]}),
    );
    // A symlink inside a granted root that points out of it leads nowhere.
    let link = w.root.join("key");
    std::os::unix::fs::symlink(&w.secret, &link).unwrap();
    denied_then_allowed(
        &w,
        "read through a symlink in the root",
        &format!("open({}).read()", py(&link)),
        json!({"read": [w.outside]}),
    );
    // A hard link from inside the root to the secret cannot be made.
    denied_then_allowed(
        &w,
        "hard-link a secret into the root",
        &format!(
            "import os; os.link({secret}, {})",
            py(&w.root.join("stolen"))
        ),
        json!({"write": [w.outside]}),
    );
    // Granted: the root, read and written.
    let root = py(&w.root);
    let (answer, _, stderr) = run(
        &w,
        &with(base(&w), json!({"write": [w.root]})),
        &format!(
            "import os\nopen(os.path.join({root}, 'new.txt'), 'w').write('hi')\nprint(open(os.path.join({root}, 'data.txt')).read())"
        ),
    );
    assert_eq!(answer, "granted", "{stderr}");
    // Renaming a file out of the root is refused.
    denied_then_allowed(
        &w,
        "move a file out of the root",
        &format!(
            "import os; os.rename(os.path.join({root}, 'new.txt'), {})",
            py(&w.outside.join("moved.txt"))
        ),
        json!({"write": [w.outside]}),
    );
}

#[test]
fn the_network_is_off_by_default_and_ports_hold() {
    let w = world();
    let open_port = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = open_port.local_addr().unwrap().port();
    let other_port = other.local_addr().unwrap().port();
    let connect =
        |p: u16| format!("import socket; socket.create_connection(('127.0.0.1', {p}), timeout=5)");
    denied_then_allowed(
        &w,
        "TCP to loopback",
        &connect(port),
        json!({"network": "all"}),
    );
    denied_then_allowed(
        &w,
        "UDP",
        &format!(
            "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))"
        ),
        json!({"network": "all"}),
    );
    // Ports: the one granted, and no other.
    let ports = with(base(&w), json!({"network": {"ports": [port]}}));
    let (granted, _, stderr) = run(&w, &ports, &format!("{}\nprint('ok')", connect(port)));
    assert_eq!(granted, "ok", "{stderr}");
    let (refused, _, _) = run(
        &w,
        &ports,
        &format!(
            "try:\n    {}\n    print('ok')\nexcept Exception as e:\n    print('refused', e)",
            connect(other_port)
        ),
    );
    assert!(
        refused.starts_with("refused"),
        "another port was reached: {refused}"
    );
}

#[test]
fn unix_sockets_ptrace_and_inherited_descriptors_are_closed_doors() {
    let w = world();
    let socket = w.root.join("agent.sock");
    let _agent = UnixListener::bind(&socket).unwrap();
    denied_then_allowed(
        &w,
        "connect to a unix socket (an ssh-agent, the session bus)",
        &format!(
            "import socket; socket.socket(socket.AF_UNIX).connect({})",
            py(&socket)
        ),
        json!({"unix_sockets": true, "write": [w.root]}),
    );
    // socketpair stays: runtimes use it between their own threads.
    let (pair, _, stderr) = run(
        &w,
        &base(&w),
        "import socket; socket.socketpair(); print('ok')",
    );
    assert_eq!(pair, "ok", "{stderr}");
    // ptrace is refused (EPERM) under any policy; without the launcher it succeeds.
    let trace = "import ctypes; r = ctypes.CDLL(None, use_errno=True).ptrace(0, 0, 0, 0); print('ok' if r == 0 else 'refused')";
    assert_eq!(
        run(&w, &with(base(&w), json!({"network": "all"})), trace).0,
        "refused"
    );
    let plain = Command::new(&w.python)
        .args(["-c", trace])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout).trim(),
        "ok",
        "the control: ptrace works unconfined"
    );

    // A descriptor to a secret left open (inheritable) by whatever started the launcher would
    // carry past Landlock: the launcher closes it. The control: passed to the same program
    // without the launcher, it reads the secret.
    let read_fd = "import os\ntry:\n    print(os.read(int(os.environ['FD']), 100).decode())\nexcept OSError as e:\n    print('refused', e)";
    let parent = |launcher: bool| {
        let program = if launcher {
            format!(
                "[{:?}, 'sandbox-exec', '--policy', {:?}, '--', {:?}, '-c', CODE]",
                target_bin("offload").display().to_string(),
                base(&w).to_string(),
                w.python.display().to_string()
            )
        } else {
            format!("[{:?}, '-c', CODE]", w.python.display().to_string())
        };
        let script = format!(
            "import os, subprocess\nCODE = {read_fd:?}\nfd = os.open({}, os.O_RDONLY)\nos.set_inheritable(fd, True)\nos.environ['FD'] = str(fd)\nsubprocess.run({program}, pass_fds=[fd])",
            py(&w.secret)
        );
        let out = Command::new(&w.python)
            .args(["-c", &script])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        parent(false),
        "PRIVATE KEY",
        "the control: an inherited descriptor reads the secret"
    );
    assert!(
        parent(true).starts_with("refused [Errno 9]"),
        "{}",
        parent(true)
    );
}

#[test]
fn a_policy_that_cannot_be_applied_starts_nothing() {
    let w = world();
    for (policy, says) in [
        (json!({"raed": []}), "not a sandbox policy"),
        (
            with(base(&w), json!({"read": ["/no/such/dir"]})),
            "cannot grant /no/such/dir",
        ),
    ] {
        let (out, status, stderr) = run(&w, &policy, "print('started')");
        assert_eq!(status, Some(126), "{stderr}");
        assert_ne!(out, "started");
        assert!(
            stderr.contains(says) && stderr.contains("the server was not started"),
            "{stderr}"
        );
    }
}

/// `offload-script-worker sandbox-exec`, the small launcher the engine starts confined servers
/// through, is the same launcher: a denial under a policy and the control under one that allows
/// it, a policy that cannot be applied and a command line without a program start nothing (126).
#[test]
fn the_small_launcher_confines_as_offload_sandbox_exec_does() {
    let w = world();
    let launcher = || {
        let mut cmd = Command::new(target_bin(offload_sandbox::LAUNCHER));
        cmd.arg(offload_sandbox::LAUNCH);
        cmd
    };
    let small = |policy: &Value, code: &str| run_through(launcher(), &w, policy, code);
    let read = format!("print(open({}).read())", py(&w.root.join("data.txt")));
    let (out, status, stderr) = small(&base(&w), &read);
    assert!(
        status != Some(0) && out.is_empty(),
        "denied: {out} {stderr}"
    );
    let (out, status, stderr) = small(&with(base(&w), json!({"read": [w.root]})), &read);
    assert_eq!((out.as_str(), status), ("granted", Some(0)), "{stderr}");
    let (out, status, stderr) = small(&json!({"raed": []}), "print('started')");
    assert_eq!(status, Some(126), "{stderr}");
    assert!(
        out.is_empty() && stderr.contains("not a sandbox policy"),
        "{stderr}"
    );
    for args in [&["--policy", "{}"][..], &[][..], &["python3"][..]] {
        let out = launcher().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(126), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("the server was not started"));
    }
}

/// Runs Python `code` as the user `nobody` (a process limit never holds root) under `policy`.
fn run_as_nobody(policy: &Value, code: &str) -> (String, String) {
    run_as_nobody_program(&[
        "sandbox-exec",
        "--policy",
        &policy.to_string(),
        "--",
        "/usr/bin/python3",
        "-c",
        code,
    ])
}

/// Runs `offload ARGS` as the user `nobody`, hard-linked where that user can reach it; its
/// stdout and stderr.
fn run_as_nobody_program(args: &[&str]) -> (String, String) {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let launcher = dir.path().join("offload");
    std::fs::hard_link(target_bin("offload"), &launcher)
        .or_else(|_| std::fs::copy(target_bin("offload"), &launcher).map(drop))
        .unwrap();
    let out = Command::new(&launcher)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir.path())
        .current_dir("/")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit_and_a_memory_bomb_at_the_memory_limit() {
    let system = json!({"read": ["/usr", "/lib", "/lib64", "/etc"], "write": ["/dev/null"]});
    // Forks up to 200 children (each waits to be killed); prints how many it got.
    let fork = "import os, signal, time\nkids = []\ntry:\n    for _ in range(200):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(30)\n            os._exit(0)\n        kids.append(pid)\nexcept OSError:\n    pass\nfor k in kids:\n    os.kill(k, signal.SIGKILL)\nprint(len(kids))";
    let (limited, stderr) = run_as_nobody(
        &with(system.clone(), json!({"limits": {"processes": 32}})),
        fork,
    );
    let got: usize = limited
        .parse()
        .unwrap_or_else(|_| panic!("{limited} {stderr}"));
    // Forks worked up to the limit (the process itself counts), and stopped there.
    assert!(
        (25..32).contains(&got),
        "{got} processes under a limit of 32"
    );
    let (control, stderr) = run_as_nobody(&system, fork);
    assert_eq!(
        control, "200",
        "the control: unlimited, all 200 start ({stderr})"
    );

    // Allocates and touches 600 MB.
    let eat = "try:\n    b = bytearray(600 << 20)\n    print('ok')\nexcept MemoryError:\n    print('refused')";
    let w = world();
    let (refused, _, stderr) = run(
        &w,
        &with(base(&w), json!({"limits": {"memory": 256u64 << 20}})),
        eat,
    );
    assert_eq!(refused, "refused", "{stderr}");
    let (allowed, _, stderr) = run(&w, &base(&w), eat);
    assert_eq!(allowed, "ok", "the control: {stderr}");
}

#[test]
fn doctor_reports_the_kernel_proves_the_launcher_and_names_the_servers_left_open() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "kept": {"command": "node", "args": ["server.js"]},
            "open": {"command": "uvx", "args": ["mcp-server-time"], "sandbox": {"network": "all"}},
            "free": {"command": "python3", "sandbox": "off"},
            "remote": {"url": "https://example.com/mcp"},
        }})
        .to_string(),
    )
    .unwrap();
    let out = Command::new(target_bin("offload"))
        .args(["doctor", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let line = |what: &str| {
        said.lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no {what} line: {said}"))
            .to_owned()
    };
    let abi: u32 = line("Landlock")
        .split_whitespace()
        .nth(2)
        .and_then(|n| n.trim_end_matches(':').parse().ok())
        .unwrap();
    assert!(abi >= 4, "{said}");
    assert!(line("Landlock").contains("TCP ports"));
    assert!(line("seccomp").contains("on:"));
    assert!(
        line("network").contains("a network namespace of its own"),
        "{said}"
    );
    assert!(line("self-test").ends_with("4 attempts, 0 escapes; each works when granted"));
    assert_eq!(
        line("servers"),
        "servers         1 confined, 1 with the network open (open), 1 unconfined (\"sandbox\": \"off\": free)"
    );
    // This suite runs as root, which no process limit holds; as a normal user, it holds.
    assert!(line("processes").contains("root"), "{said}");
    let (as_user, stderr) = run_as_nobody_program(&["doctor", "--config", "/dev/null"]);
    assert!(
        as_user.contains("processes       limited per server"),
        "{as_user} {stderr}"
    );
}

#[test]
fn a_servers_network_relay_ends_with_the_server() {
    // The server dies inside its Landlock domain, whose signal scope keeps its death signal from
    // the relay forked before it: the relay must see the end itself, even of a SIGKILL.
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let policy = with(
        base(&w),
        json!({"network": {"proxy": {"port": 40_001, "socket": dir.path().join("proxy.sock")}}}),
    );
    let mut server = Command::new(target_bin("offload"))
        .args(["sandbox-exec", "--policy", &policy.to_string(), "--"])
        .arg(&w.python)
        .args(["-c", "import time; time.sleep(60)"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let relay = loop {
        if let Some(&r) = offload_testkit::children_running(server.id(), "sandbox-exec").first() {
            break r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no relay started for a server with a network allow-list"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // Positive control: the relay serves while the server runs.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        offload_testkit::process_alive(relay),
        "the relay ended while its server ran"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while offload_testkit::process_alive(relay) {
        assert!(
            std::time::Instant::now() < deadline,
            "the relay {relay} outlived its server by 3 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
