//! What confinement costs: a program started through the launcher (`offload sandbox-exec`)
//! beside the same program started directly; a server's start and first call through `offload
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

/// `/bin/true` through the launcher, under a policy like a server's, beside `/bin/true`.
fn launcher(starts: usize) -> anyhow::Result<()> {
    let policy = json!({
        "read": ["/usr", "/lib", "/lib64", "/bin", "/etc", "/proc/self"],
        "write": ["/dev/null", std::env::temp_dir()],
        "network": "off",
    })
    .to_string();
    let offload = target_bin("offload");
    let confined = || {
        Command::new(&offload)
            .args(["sandbox-exec", "--policy", &policy, "--", "/bin/true"])
            .stderr(Stdio::inherit())
            .status()
    };
    let direct = || Command::new("/bin/true").status();
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
        "start /bin/true through `offload sandbox-exec` (Landlock + seccomp) beside directly, {starts} starts each, alternating"
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
