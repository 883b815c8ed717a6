//! `run_script` through `offload mcp` in its default configuration: a real rmcp client, the
//! fixture server as upstream, the script in a real confined worker. Its calls go through the
//! same doors as the model's own (scopes, turned-off tools, audit, each event marked with the
//! run), its answer is small or stored, and every limit holds without holding up other calls.

use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, error_code, text};
use serde_json::{Value, json};

use crate::with_fixture;

async fn script(client: &Client, code: &str) -> rmcp::model::CallToolResult {
    call(client, "run_script", json!({"code": code})).await
}

fn structured(r: &rmcp::model::CallToolResult) -> &Value {
    r.structured_content.as_ref().unwrap_or(&Value::Null)
}

fn audit(ctx: &TestContext) -> Vec<Value> {
    std::fs::read_to_string(ctx.home.join(".local/share/offload/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `offload.read` gives a script the page as a value (the tool sends a model text), in pages
/// of up to 64 KiB: a script's reads do not reach the model, only what it returns.
#[tokio::test]
async fn a_script_reads_pages_as_values() {
    let ctx = with_fixture();
    let body: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ctx.root.join("big.log"), body).unwrap();
    let client = ctx.client().await;
    let r = script(
        &client,
        r#"const p = await offload.read("big.log", { offset: 40000, length: 3 });
           const big = await offload.read("big.log", { length: 20000 });
           return { content: p.content, next: p.next_offset, total: p.total,
                    bytes: big.content.length, cut: big.truncated };"#,
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let got = &structured(&r)["result"];
    assert_eq!(
        got["content"], "line 40000\nline 40001\nline 40002",
        "{got}"
    );
    assert_eq!(
        (got["next"].clone(), got["total"].clone()),
        (json!(40003), json!(50_000))
    );
    let bytes = got["bytes"].as_u64().unwrap();
    assert!(bytes > 16 * 1024 && bytes <= 64 * 1024, "{bytes}");
    assert_eq!(got["cut"], true);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_script_joins_a_file_and_a_tool_and_only_its_answer_returns() {
    let ctx = with_fixture();
    let mut csv = String::from("id,qty\n");
    for i in 1..=50 {
        csv.push_str(&format!("{i},{}\n", i % 7));
    }
    std::fs::write(ctx.root.join("orders.csv"), csv).unwrap();
    let client = ctx.client().await;
    let listed = client.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "run_script"));

    let r = script(
        &client,
        r#"const rows = await offload.query("orders.csv", "SELECT id, qty FROM data ORDER BY id");
           let total = 0;
           for (const row of rows) {
             const echoed = await tools.fx.echo({ text: String(row.qty) });
             total += Number(echoed);
           }
           const kept = await offload.store(rows.map(r => ({ id: r.id, double: r.qty * 2 })), { name: "doubled.json" });
           const [check] = await offload.query(kept.path, "SELECT SUM(double) AS s FROM data");
           const structured = await tools.call("fx", "structured", { n: 2 });
           console.log("rows", rows.length);
           return { total, stored: check.s, items: structured.items.length, file: kept.path };"#,
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let want: i64 = (1..=50).map(|i| i % 7).sum();
    let s = structured(&r);
    assert_eq!(s["result"]["total"], json!(want), "{s}");
    assert_eq!(s["result"]["stored"], json!(want * 2), "{s}");
    assert_eq!(s["result"]["items"], json!(2), "{s}");
    assert_eq!(s["logs"], json!(["rows 50"]));
    assert_eq!(
        s["calls"],
        json!([
            {"call": "offload.query", "count": 2, "failed": 0, "millis": s["calls"][0]["millis"]},
            {"call": "tools.fx.echo", "count": 50, "failed": 0, "millis": s["calls"][1]["millis"]},
            {"call": "offload.store", "count": 1, "failed": 0, "millis": s["calls"][2]["millis"]},
            {"call": "tools.fx.structured", "count": 1, "failed": 0, "millis": s["calls"][3]["millis"]},
        ]),
        "{s}"
    );
    // The stored file is in the root, and the model can query it too.
    let file = s["result"]["file"].as_str().unwrap();
    assert!(file.starts_with(ctx.root.to_str().unwrap()), "{file}");
    let q = call(
        &client,
        "query_file",
        json!({"path": file, "sql": "SELECT COUNT(*) FROM data"}),
    )
    .await;
    assert_eq!(structured(&q)["rows"], json!([[50]]), "{q:?}");
    // 54 calls, one small answer.
    let bytes = serde_json::to_string(&r).unwrap().len();
    assert!(bytes < 3_000, "{bytes} bytes reached the client");

    // The audit log: the run's own event, and each call it made under the same number.
    let events = audit(&ctx);
    let run = events
        .iter()
        .find(|e| e["kind"] == "script")
        .unwrap_or_else(|| panic!("no script event: {events:?}"));
    let number = run["script"].as_u64().expect("the run is numbered");
    let under: Vec<&Value> = events
        .iter()
        .filter(|e| e["script"] == json!(number) && e["kind"] != "script")
        .collect();
    assert_eq!(under.len(), 54);
    assert_eq!(
        under
            .iter()
            .filter(|e| e["tool"] == "tools.fx.echo")
            .count(),
        50
    );
    assert!(under.iter().all(|e| e["outcome"] == "ok"), "{under:?}");
    assert!(
        under
            .iter()
            .any(|e| e["tool"] == "offload.store" && e["stored"].is_string()),
        "{under:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn errors_are_typed_with_the_calls_made_before_them() {
    let ctx = with_fixture();
    let client = ctx.client().await;

    // A tool's failure is a ToolError the script may catch...
    let r = script(
        &client,
        r#"try { await tools.fx.fail({ message: "no such order" }); }
           catch (e) { return [e.name, e.server, e.tool, e.message]; }"#,
    )
    .await;
    assert_eq!(
        structured(&r)["result"],
        json!(["ToolError", "fx", "fail", "no such order"]),
        "{r:?}"
    );
    // ...or leave to end the run.
    let r = script(
        &client,
        r#"await tools.fx.echo({text: "a"}); await tools.fx.fail({});"#,
    )
    .await;
    assert_eq!(error_code(&r), "tool_error", "{r:?}");
    let error = &structured(&r)["error"];
    assert_eq!(error["calls"][0]["count"], json!(1), "{error}");
    assert_eq!(error["calls"][1]["failed"], json!(1), "{error}");
    // A tool that does not exist, a server that does not exist: the gateway's own refusals.
    let r = script(
        &client,
        r#"const out = [];
           for (const [s, t] of [["fx", "nope"], ["nobody", "echo"]]) {
             try { await tools.call(s, t, {}); } catch (e) { out.push(e.message); }
           }
           return out;"#,
    )
    .await;
    let said = structured(&r)["result"].to_string();
    assert!(said.contains("nope") && said.contains("nobody"), "{said}");
    // The script's own mistake: where it is.
    let r = script(
        &client,
        "const a = 1;\nconsole.log(a.nothing.deeper);\nreturn a;",
    )
    .await;
    assert_eq!(error_code(&r), "script_error", "{r:?}");
    let error = &structured(&r)["error"];
    assert_eq!(error["line"], json!(2), "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("TypeError"),
        "{error}"
    );
    // A file outside the roots, through the script, is refused as it would be to the model.
    let r = script(&client, r#"return await offload.read("/etc/passwd");"#).await;
    assert_eq!(error_code(&r), "script_error", "{r:?}");
    assert!(text(&r).contains("allowed"), "{}", text(&r));
    // Nothing of the outside world is in reach.
    let r = script(
        &client,
        r#"const seen = [typeof require, typeof process, typeof fetch, typeof std, typeof os,
                         typeof XMLHttpRequest, typeof WebAssembly];
           let imported = "no";
           try { await import("os"); imported = "yes"; } catch (e) { imported = e.message; }
           return { seen, imported };"#,
    )
    .await;
    let s = structured(&r);
    assert_eq!(s["result"]["seen"], json!(vec!["undefined"; 7]), "{s}");
    assert_ne!(s["result"]["imported"], "yes", "{s}");
    // Arguments that are not a script's: the protocol's error.
    let bad = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("run_script")
                .with_arguments(json!({"code": 3}).as_object().unwrap().clone()),
        )
        .await;
    assert!(bad.is_err(), "{bad:?}");
    let r = call(
        &client,
        "run_script",
        json!({"code": "return 1", "timeout_ms": 999_999_999}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments", "{r:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_limit_holds_and_other_calls_go_on_meanwhile() {
    let ctx = with_fixture();
    std::fs::write(ctx.root.join("n.csv"), "n\n1\n2\n").unwrap();
    let client = ctx.client().await;
    let warm = script(&client, "return 1").await;
    assert_eq!(structured(&warm)["result"], json!(1), "{warm:?}");

    // A busy loop, inside try/catch, stopped at its deadline; calls made meanwhile answer.
    let busy = async {
        let started = Instant::now();
        let r = call(
            &client,
            "run_script",
            json!({"code": "try { while (true) {} } catch (e) { return 'caught'; }", "timeout_ms": 600}),
        )
        .await;
        (r, started.elapsed())
    };
    let others = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        for _ in 0..5 {
            let r = call(
                &client,
                "query_file",
                json!({"path": "n.csv", "sql": "SELECT SUM(n) FROM data"}),
            )
            .await;
            assert_eq!(structured(&r)["rows"], json!([[3]]), "{r:?}");
        }
        let r = script(&client, "return 2").await;
        assert_eq!(structured(&r)["result"], json!(2), "{r:?}");
        started.elapsed()
    };
    let ((r, took), meanwhile) = tokio::join!(busy, others);
    assert_eq!(error_code(&r), "script_timeout", "{r:?}");
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_millis(700),
        "stopped {took:?} after it began, its deadline 600 ms"
    );
    assert!(
        meanwhile < Duration::from_millis(500),
        "other calls took {meanwhile:?}"
    );

    // A promise that never settles ends at the deadline; one rejected and left alone does not
    // end the run.
    let r = call(
        &client,
        "run_script",
        json!({"code": "await new Promise(() => {});", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(error_code(&r), "script_timeout", "{r:?}");
    let r = script(
        &client,
        "Promise.reject(new Error('left alone')); return 'fine';",
    )
    .await;
    assert_eq!(structured(&r)["result"], json!("fine"), "{r:?}");

    // Memory: an allocation bomb, and one string too long.
    let r = script(
        &client,
        "const a = []; while (true) a.push(new Array(1e5).fill(1.5));",
    )
    .await;
    assert_eq!(error_code(&r), "script_memory", "{r:?}");
    let r = script(
        &client,
        "const big = 'x'.repeat(1 << 28); return big.length;",
    )
    .await;
    assert_eq!(error_code(&r), "script_memory", "{r:?}");

    // 10,000 calls one after another: stopped at the 201st, the 200 made listed; all at once:
    // stopped as the 201st is asked, before the rest go out.
    let r = script(
        &client,
        "for (let i = 0; i < 10000; i++) await tools.fx.echo({text: 'x'});",
    )
    .await;
    assert_eq!(error_code(&r), "too_many_calls", "{r:?}");
    let made = &structured(&r)["error"]["calls"];
    assert_eq!(made[0]["count"], json!(200), "{made}");
    let r = script(
        &client,
        "const all = []; for (let i = 0; i < 10000; i++) all.push(tools.fx.counter({})); await Promise.all(all);",
    )
    .await;
    assert_eq!(error_code(&r), "too_many_calls", "{r:?}");
    let counted = text(&crate::fx(&client, "counter", json!({})).await);
    let counted: u64 = counted.parse().unwrap();
    assert!(counted <= 201, "{counted} calls reached the upstream");

    // After all that, scripts still run.
    let r = script(&client, "return (await tools.fx.echo({text: '7'})) * 6").await;
    assert_eq!(structured(&r)["result"], json!(42), "{r:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_crashed_worker_costs_its_one_script() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let warm = script(&client, "return 1").await;
    assert_eq!(structured(&warm)["result"], json!(1));
    // Kill the worker while its script waits on a slow tool.
    let running = script(&client, "await tools.fx.slow({ms: 5000}); return 'never';");
    let killer = async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let workers = worker_pids(&ctx).await;
        assert!(!workers.is_empty(), "a worker runs the script");
        for pid in &workers {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    };
    let (r, ()) = tokio::join!(running, killer);
    assert_eq!(error_code(&r), "script_crashed", "{r:?}");
    assert!(text(&r).contains("signal"), "{}", text(&r));
    // The gateway goes on: tools, and the next script.
    let r = crate::fx(&client, "echo", json!({"text": "still here"})).await;
    assert_eq!(text(&r), "still here");
    let r = script(&client, "return 'again'").await;
    assert_eq!(structured(&r)["result"], json!("again"), "{r:?}");
    client.cancel().await.unwrap();
}

/// The script workers of the gateway serving `ctx`'s client: children of the `offload` started
/// with `ctx`'s configuration (not the other tests' workers, which run at the same time), and
/// not its confined servers' launchers, the same program run as `sandbox-exec`.
async fn worker_pids(ctx: &TestContext) -> Vec<u32> {
    let config = format!("OFFLOAD_CONFIG={}\0", ctx.config_path.display());
    let gateways = offload_testkit::running_with("offload")
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|e| String::from_utf8_lossy(&e).contains(&config))
        });
    gateways
        .into_iter()
        .flat_map(|g| offload_testkit::children_running(g, "script-worker"))
        .filter(|pid| {
            offload_testkit::command_line(*pid)
                .is_some_and(|c| !c.contains(offload_sandbox::LAUNCH))
        })
        .collect()
}

#[tokio::test]
async fn a_big_answer_is_stored_and_scopes_and_turned_off_tools_hold_inside_scripts() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = script(
        &client,
        "return Array.from({length: 20000}, (_, i) => ({id: i, name: 'row ' + i}));",
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    let path = s["path"].as_str().unwrap_or_else(|| panic!("stored: {s}"));
    assert_eq!(s["summary"]["rows"], json!(20000), "{s}");
    assert!(s["calls"].is_array(), "{s}");
    let bytes = serde_json::to_string(&r).unwrap().len();
    assert!(bytes < 4_000, "{bytes} bytes reached the client");
    let q = call(
        &client,
        "query_file",
        json!({"path": path, "sql": "SELECT MAX(id) FROM data"}),
    )
    .await;
    assert_eq!(structured(&q)["rows"], json!([[19999]]), "{q:?}");
    client.cancel().await.unwrap();

    // Over HTTP: a token without `call` is not offered scripts; one without `store` runs them
    // but cannot store from one.
    let caller = ctx.token("caller", "read,call");
    let reader = ctx.token("reader", "read");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    let read_only = crate::http::http_client(&url, &reader).await;
    let r = script(&read_only, "return 1").await;
    assert_eq!(error_code(&r), "forbidden", "{r:?}");
    let calling = crate::http::http_client(&url, &caller).await;
    let r = script(
        &calling,
        r#"const echoed = await tools.fx.echo({text: "ok"});
           try { await offload.store([1]); return "stored"; } catch (e) { return [echoed, e.code, e.message]; }"#,
    )
    .await;
    let result = &structured(&r)["result"];
    assert_eq!(result[0], "ok", "{r:?}");
    assert_eq!(result[1], "forbidden", "{r:?}");
}

#[tokio::test]
async fn a_tool_turned_off_is_refused_inside_scripts_as_outside() {
    let ctx = TestContext::new();
    // A tool the user turned off is refused inside a script as outside.
    let mut fx = TestContext::fixture(&[]);
    fx["disabledTools"] = json!(["echo"]);
    ctx.write_servers(json!({"fx": fx}));
    let client = ctx.client().await;
    let r = script(
        &client,
        r#"try { await tools.fx.echo({text: "x"}); return "called"; } catch (e) { return e.message; }"#,
    )
    .await;
    let said = structured(&r)["result"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_ne!(said, "called");
    assert!(said.contains("echo"), "{said}");
    client.cancel().await.unwrap();
}
