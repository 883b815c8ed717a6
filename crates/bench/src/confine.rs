//! What confinement costs: a program started through the launcher servers start through
//! (`offload-script-worker sandbox-exec`; also `offload sandbox-exec`, the same launcher inside
//! the 60 MB program) beside the same program started directly; a server's start and first call through `offload
//! mcp`, confined by default beside the same server with `"sandbox": "off"`; and warm calls to
//! each, alternating so both see the same machine.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, connect, target_bin};
use serde_json::json;

use crate::offload::as_users;
use crate::stats::{header, row, summarize};

pub async fn run(starts: usize, calls: usize) -> anyhow::Result<()> {
    launcher(starts)?;
    servers(calls).await
}

/// `/bin/true` through the launcher, under a policy like a server's (its limits included),
/// beside `/bin/true`; run as root, also as a normal user (`nobody`), whose process limit
/// makes the launcher enter a user namespace.
fn launcher(starts: usize) -> anyhow::Result<()> {
    let policy = json!({
        "read": ["/usr", "/lib", "/lib64", "/bin", "/etc", "/proc/self"],
        "write": ["/dev/null", std::env::temp_dir()],
        "network": "off",
        "limits": offload_sandbox::Limits::default_for_servers(),
    })
    .to_string();
    let small = target_bin(offload_sandbox::LAUNCHER);
    starts_beside_direct(starts, &small, &policy, None, "as this user")?;
    starts_beside_direct(
        starts,
        &target_bin("offload"),
        &policy,
        None,
        "as this user",
    )?;
    if offload_sandbox::runs_as_root() {
        use std::os::unix::fs::PermissionsExt;
        // Where `nobody` can reach the launcher.
        let dir = tempfile::tempdir()?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        let linked = dir.path().join(offload_sandbox::LAUNCHER);
        std::fs::hard_link(&small, &linked)
            .or_else(|_| std::fs::copy(&small, &linked).map(drop))?;
        starts_beside_direct(
            starts,
            &linked,
            &policy,
            Some(65534),
            "as a normal user (the process limit's user namespace entered)",
        )?;
    }
    Ok(())
}

fn starts_beside_direct(
    starts: usize,
    offload: &std::path::Path,
    policy: &str,
    uid: Option<u32>,
    who: &str,
) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let as_who = |mut cmd: Command| {
        if let Some(uid) = uid {
            cmd.uid(uid).gid(uid).current_dir("/");
        }
        cmd
    };
    let confined = || {
        let mut cmd = Command::new(offload);
        cmd.arg(offload_sandbox::LAUNCH)
            .args(["--policy", policy, "--", "/bin/true"])
            .stderr(Stdio::inherit());
        as_who(cmd).status()
    };
    let direct = || as_who(Command::new("/bin/true")).status();
    for _ in 0..20 {
        confined()?;
        direct()?;
    }
    let (mut ours, mut base) = (Vec::with_capacity(starts), Vec::with_capacity(starts));
    for _ in 0..starts {
        let t = Instant::now();
        anyhow::ensure!(confined()?.success(), "the launcher failed");
        ours.push(t.elapsed());
        let t = Instant::now();
        direct()?;
        base.push(t.elapsed());
    }
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!(
        "start /bin/true through `{} {}` (limits, namespaces, Landlock, seccomp) beside directly, {who}, {starts} starts each, alternating",
        offload.file_name().unwrap_or_default().to_string_lossy(),
        offload_sandbox::LAUNCH,
    );
    println!("{}", header("confined", "direct"));
    println!("{}", row("median", o.median, b.median));
    println!("{}", row("p99", o.p99, b.p99));
    println!();
    Ok(())
}

/// The fixture server confined (the defaults) and unconfined, through one `offload mcp`.
async fn servers(calls: usize) -> anyhow::Result<()> {
    let rounds = 15;
    let (mut first_ours, mut first_base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let ctx = context();
        let client = connect(as_users(ctx.offload_command(&[]))).await;
        // Alternate which starts first, so neither always pays for a cold cache.
        let order = if round % 2 == 0 {
            ["jail", "open"]
        } else {
            ["open", "jail"]
        };
        for server in order {
            let t = Instant::now();
            echo(&client, server).await;
            if server == "jail" {
                &mut first_ours
            } else {
                &mut first_base
            }
            .push(t.elapsed());
        }
        client.cancel().await?;
    }
    let (o, b) = (summarize(&mut first_ours), summarize(&mut first_base));
    println!(
        "a server's start and first call (spawn, MCP handshake, tools/list, call_tool), {rounds} fresh `offload mcp` each"
    );
    println!("{}", header("confined", "\"off\""));
    println!("{}", row("median", o.median, b.median));
    println!();

    let ctx = context();
    let client = connect(as_users(ctx.offload_command(&[]))).await;
    for _ in 0..200 {
        echo(&client, "jail").await;
        echo(&client, "open").await;
    }
    let (mut ours, mut base) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for _ in 0..calls {
        let t = Instant::now();
        echo(&client, "jail").await;
        ours.push(t.elapsed());
        let t = Instant::now();
        echo(&client, "open").await;
        base.push(t.elapsed());
    }
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!("call_tool -> echo on a warm server, {calls} calls each, alternating");
    println!("{}", header("confined", "\"off\""));
    println!("{}", row("median", o.median, b.median));
    println!("{}", row("p99", o.p99, b.p99));
    client.cancel().await?;
    Ok(())
}

fn context() -> TestContext {
    let ctx = TestContext::new();
    let mut open = TestContext::fixture(&[]);
    open["sandbox"] = json!("off");
    let mut jail = TestContext::fixture(&[]);
    jail["sandbox"] = json!({});
    ctx.write_servers(json!({"jail": jail, "open": open}));
    ctx
}

async fn echo(client: &Client, server: &str) -> Duration {
    let t = Instant::now();
    let r = call(
        client,
        "call_tool",
        json!({"server": server, "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    t.elapsed()
}
