//! Nothing waits on something broken: a server that cannot start, or hangs while starting,
//! answers at once once it is known to be down (with its last error and when it is retried),
//! is retried in the background, and costs the healthy servers' calls nothing measurable.
//! A tool that keeps reporting progress is not cut off by its timeout.

use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, error_code, structured, text};
use serde_json::{Value, json};

use crate::fx;

/// The median time of `n` echo calls to the healthy server.
async fn healthy_median(client: &Client, n: usize) -> Duration {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let start = Instant::now();
        let r = fx(client, "echo", json!({"text": format!("ping {i}")})).await;
        times.push(start.elapsed());
        assert_eq!(text(&r), format!("ping {i}"));
    }
    times.sort();
    times[n / 2]
}

fn broken_servers() -> Value {
    let mut hangs = TestContext::fixture(&["--start-delay-ms", "600000"]);
    hangs["startTimeoutSecs"] = json!(2);
    json!({
        "fx": TestContext::fixture(&[]),
        "missing": {"command": "offload-no-such-command-xyz"},
        "refuses": TestContext::fixture(&["--fail-start"]),
        "hangs": hangs,
    })
}

#[tokio::test]
async fn a_server_that_cannot_start_costs_the_healthy_ones_nothing() {
    let ctx = TestContext::new();
    ctx.write_servers(broken_servers());
    let client = ctx.client().await;
    // Warm up, then the healthy server's normal call time.
    healthy_median(&client, 5).await;
    let normal = healthy_median(&client, 41).await;

    // The first discovery gives first starts a moment (a second), not the hanging server's
    // start timeout: what has not started by then is said to be starting.
    let start = Instant::now();
    let first = call(&client, "list_available_tools", json!({})).await;
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    let servers = &structured(&first)["servers"];
    let state = |name: &str| {
        servers
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {servers}"))
            .clone()
    };
    assert_eq!(state("fx")["status"], "ready");
    for name in ["missing", "refuses"] {
        assert_eq!(state(name)["status"], "error", "{name}: {servers}");
    }
    assert_eq!(state("hangs")["status"], "starting", "{servers}");
    assert!(
        structured(&first)["note"].as_str().unwrap().contains(
            "still starting, so their tools are not listed yet (ask again in a few seconds): hangs"
        ),
        "{first:?}"
    );
    assert!(
        state("refuses")["error"]
            .as_str()
            .unwrap()
            .contains("refusing to start"),
        "{servers}"
    );

    // From now on every discovery answers within the healthy servers' time: the broken ones
    // are known to be down and are retried in the background, never inside a request.
    for round in 0..6 {
        let start = Instant::now();
        let listed = call(&client, "list_available_tools", json!({})).await;
        let took = start.elapsed();
        assert!(took < Duration::from_millis(500), "round {round}: {took:?}");
        assert!(
            text(&listed).contains("echo"),
            "the healthy server's tools are listed"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // Concurrent calls to a broken server answer at once with its error and the retry time,
    // while calls to the healthy server go on at their normal pace.
    let broken_calls = async {
        let calls = (0..3).map(|_| async {
            let start = Instant::now();
            let r = call(
                &client,
                "call_tool",
                json!({"server": "refuses", "tool_name": "echo", "tool_args": {"text": "x"}}),
            )
            .await;
            (r, start.elapsed())
        });
        futures::future::join_all(calls).await
    };
    let (broken, during) = tokio::join!(broken_calls, healthy_median(&client, 41));
    for (r, took) in &broken {
        assert_eq!(error_code(r), "server_unavailable", "{}", text(r));
        let message = text(r);
        assert!(
            message.contains("refusing to start") && message.contains("Offload retries in")
                || message.contains("starting it again right now"),
            "{message}"
        );
        assert!(*took < Duration::from_millis(500), "{took:?}");
    }
    let during_more = {
        let hammer = async {
            for _ in 0..20 {
                let _ = call(
                    &client,
                    "call_tool",
                    json!({"server": "hangs", "tool_name": "echo"}),
                )
                .await;
            }
        };
        let (_, median) = tokio::join!(hammer, healthy_median(&client, 41));
        median
    };
    let slack = Duration::from_millis(5);
    assert!(
        during <= normal + slack && during_more <= normal + slack,
        "healthy median: {normal:?} alone, {during:?} beside calls to a broken server, {during_more:?} beside calls to a hanging one"
    );
    eprintln!(
        "healthy call median: {normal:?} alone, {during:?} / {during_more:?} beside broken servers"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_failing_server_is_retried_in_the_background_and_recovers_by_itself() {
    let ctx = TestContext::new();
    let flag = ctx.root.join("fail-until-removed");
    std::fs::write(&flag, "").unwrap();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "flaky": TestContext::fixture(&["--fail-start-while", flag.to_str().unwrap()]),
    }));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "flaky", "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_eq!(error_code(&r), "server_unavailable");
    std::fs::remove_file(&flag).unwrap();
    // Nobody calls it: the background retry (1 s, then 2 s, ...) brings it up by itself.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed = call(
            &client,
            "list_available_tools",
            json!({"filter_by_server": "flaky"}),
        )
        .await;
        if structured(&listed)["servers"][0]["status"] == "ready" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never recovered: {}",
            text(&listed)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let r = call(
        &client,
        "call_tool",
        json!({"server": "flaky", "tool_name": "echo", "tool_args": {"text": "back"}}),
    )
    .await;
    assert_eq!(text(&r), "back");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn progress_resets_the_call_timer() {
    let ctx = TestContext::new();
    let mut entry = TestContext::fixture(&[]);
    entry["timeoutSecs"] = json!(1);
    ctx.write_servers(json!({"fx": entry}));
    let client = ctx.client().await;
    // 3 s in all, a progress notification every 300 ms: never 1 s without news.
    let start = Instant::now();
    let r = fx(&client, "slow", json!({"ms": 3000, "steps": 10})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(start.elapsed() >= Duration::from_millis(2900));
    // The same length without progress is cut at the timeout.
    let start = Instant::now();
    let r = fx(&client, "slow", json!({"ms": 3000})).await;
    assert_eq!(error_code(&r), "upstream_timeout");
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "{:?}",
        start.elapsed()
    );
    client.cancel().await.unwrap();
}

/// A server slow to start (a cold `npx -y` takes 20 s) holds up no tool of Offload's: in meta
/// mode, on its first start ever (nothing remembered), `tools/list` and the file tools answer
/// at once and `list_available_tools` says it is still starting instead of waiting for it. (In
/// direct and `auto` modes the first list waits for it, as a client connected to it directly
/// would: see `first_minute`.)
#[tokio::test]
async fn a_server_slow_to_start_holds_up_no_tool_of_offloads() {
    let ctx = TestContext::new();
    let mut slow = TestContext::fixture(&["--start-delay-ms", "6000"]);
    slow["startTimeoutSecs"] = json!(30);
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "meta"},
        "mcpServers": {"fx": TestContext::fixture(&[]), "slow": slow},
    }));
    std::fs::write(ctx.root.join("notes.txt"), "one\ntwo\n").unwrap();
    let client = ctx.client().await;
    let asked = Instant::now();
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        asked.elapsed() < Duration::from_millis(1000),
        "{:?}",
        asked.elapsed()
    );
    assert!(tools.iter().any(|t| t.name == "read_file"));
    let r = call(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert!(text(&r).contains("two"), "{}", text(&r));
    let r = call(&client, "list_available_tools", json!({"query": "echo"})).await;
    assert!(
        asked.elapsed() < Duration::from_millis(2500),
        "{:?}",
        asked.elapsed()
    );
    let note = structured(&r)["note"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(note.contains("still starting"), "{note}");
    assert!(note.contains("slow"), "{note}");
    assert!(text(&r).contains("fx/echo"), "{}", text(&r));
    client.cancel().await.unwrap();
}
