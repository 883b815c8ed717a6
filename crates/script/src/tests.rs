//! Scripts against a host that answers like an upstream would: every limit, errors typed with
//! the calls made before them, and nothing of the outside world in reach.

use super::*;
use serde_json::json;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

/// `fx.echo` answers its arguments, `fx.fail` fails, `fx.slow` answers after 50 ms; records
/// how many calls were in flight at most.
#[derive(Default)]
struct Fx {
    in_flight: Rc<Cell<usize>>,
    most: Rc<Cell<usize>>,
}

impl Host for Fx {
    fn ask(&self, request: Request) -> HostFuture {
        let (in_flight, most) = (self.in_flight.clone(), self.most.clone());
        Box::pin(async move {
            in_flight.set(in_flight.get() + 1);
            most.set(most.get().max(in_flight.get()));
            let answer = match request {
                Request::Tool { tool, args, .. } if tool == "echo" => Ok(args),
                Request::Tool { tool, .. } if tool == "fail" => Err(HostError {
                    code: "tool_error".into(),
                    message: "boom".into(),
                }),
                Request::Tool { tool, .. } if tool == "slow" => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(json!({"slow": true}))
                }
                Request::Query { sql, .. } => Ok(json!([{"sql": sql}])),
                other => Err(HostError {
                    code: "unknown".into(),
                    message: format!("no {}", other.label()),
                }),
            };
            in_flight.set(in_flight.get() - 1);
            answer
        })
    }
}

async fn go(code: &str, limits: &Limits) -> Result<Outcome, Failed> {
    run(code, Rc::new(Fx::default()), limits).await
}

fn quick() -> Limits {
    Limits {
        deadline: Duration::from_millis(500),
        ..Limits::default()
    }
}

#[tokio::test]
async fn a_script_calls_tools_joins_their_answers_and_only_its_result_comes_back() {
    let out = go(
        r#"
        const rows = [1, 2, 3];
        const answers = await Promise.all(rows.map((n) => tools.fx.echo({ n })));
        const more = await tools.call("fx", "echo", { n: 10 });
        console.log("summed", answers.length, { more });
        const [q] = await offload.query("/data/sales.csv", "select 1");
        return { total: answers.reduce((t, a) => t + a.n, 0) + more.n, sql: q.sql };
        "#,
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.result, json!({"total": 16, "sql": "select 1"}));
    assert_eq!(out.logs, ["summed 3 {\"more\":{\"n\":10}}"]);
    let tallied: Vec<(&str, u32)> = out
        .calls
        .iter()
        .map(|c| (c.call.as_str(), c.count))
        .collect();
    assert_eq!(tallied, [("tools.fx.echo", 4), ("offload.query", 1)]);
    assert!(out.calls.iter().all(|c| c.failed == 0));
    // No return: null.
    assert_eq!(
        go("1 + 1;", &Limits::default()).await.unwrap().result,
        Value::Null
    );
}

#[tokio::test]
async fn a_tool_error_can_be_caught_and_otherwise_ends_the_run_typed() {
    let caught = go(
        r#"try { await tools.fx.fail({}); } catch (e) {
             return [e.name, e.server, e.tool, e.message, e instanceof ToolError]; }"#,
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        caught.result,
        json!(["ToolError", "fx", "fail", "boom", true])
    );
    let failed = go(
        "await tools.fx.echo({}); await tools.fx.fail({});",
        &Limits::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        failed.failure,
        Failure::Tool {
            server: "fx".into(),
            tool: "fail".into(),
            message: "boom".into()
        }
    );
    assert_eq!(failed.failure.code(), "tool_error");
    assert_eq!(
        Call::total(&failed.calls),
        2,
        "the calls made before it are listed"
    );
    assert_eq!(failed.calls.iter().map(|c| c.failed).sum::<u32>(), 1);
}

#[tokio::test]
async fn an_endless_loop_is_stopped_at_its_deadline_whatever_it_catches() {
    for code in [
        "while (true) {}",
        "for (;;) { try { while (true) {} } catch (e) {} }",
        "await tools.fx.echo({}); while (true) { try { JSON.stringify({}); } finally { } }",
    ] {
        let started = Instant::now();
        let failed = go(code, &quick()).await.unwrap_err();
        let took = started.elapsed();
        assert_eq!(
            failed.failure,
            Failure::Timeout(Duration::from_millis(500)),
            "{code}"
        );
        assert_eq!(failed.failure.code(), "script_timeout");
        assert!(
            took < Duration::from_millis(600),
            "{code}: stopped {took:?} after it started (deadline 500 ms)"
        );
    }
    // Waiting forever (a promise nobody settles, a timer past the deadline) ends the same way.
    for code in [
        "await new Promise(() => {});",
        "await new Promise((r) => setTimeout(r, 60000));",
    ] {
        let failed = go(code, &quick()).await.unwrap_err();
        assert_eq!(failed.failure.code(), "script_timeout", "{code}");
    }
    // A timer within the deadline fires.
    let timed = go(
        "return await new Promise((r) => setTimeout(() => r('fired'), 20));",
        &quick(),
    )
    .await
    .unwrap();
    assert_eq!(timed.result, json!("fired"));
}

#[tokio::test]
async fn a_memory_bomb_stops_at_the_cap_and_a_script_under_it_runs() {
    let limits = Limits {
        memory: 16 << 20,
        ..Limits::default()
    };
    for code in [
        "const a = []; while (true) a.push('x'.repeat(1 << 16) + a.length);",
        "const a = []; while (true) a.push({ n: a.length, s: String(a.length) });",
        "const a = []; while (true) a.push(new Array(1 << 16).fill(1));",
    ] {
        let failed = go(code, &limits).await.unwrap_err();
        assert_eq!(failed.failure, Failure::Memory(16 << 20), "{code}");
        assert_eq!(failed.failure.code(), "script_memory");
    }
    // Caught, an out-of-memory error leaves the script under the cap, where it may go on.
    let caught = go(
        "try { const a = []; while (true) a.push(new Array(1 << 16).fill(1)); } catch (e) { return String(e); }",
        &limits,
    )
    .await
    .unwrap();
    assert!(
        caught.result.as_str().unwrap().contains("out of memory"),
        "{:?}",
        caught.result
    );
    let fine = go(
        "return new Array(100000).fill(1).reduce((a, b) => a + b, 0);",
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(fine.result, json!(100000));
}

#[tokio::test]
async fn calls_over_the_limit_end_the_run_even_when_caught_and_run_at_most_so_many_at_once() {
    let limits = Limits {
        calls: 10,
        ..Limits::default()
    };
    let failed = go(
        "for (let i = 0; i < 20; i++) { try { await tools.fx.echo({ i }); } catch (e) {} } return 'done';",
        &limits,
    )
    .await
    .unwrap_err();
    assert_eq!(failed.failure, Failure::TooManyCalls(10));
    assert_eq!(failed.failure.code(), "too_many_calls");
    assert_eq!(Call::total(&failed.calls), 10);

    let fx = Rc::new(Fx::default());
    let most = fx.most.clone();
    let limits = Limits {
        concurrency: 2,
        ..Limits::default()
    };
    let out = run(
        "return (await Promise.all([1,2,3,4,5,6].map(() => tools.fx.slow({})))).length;",
        fx,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(out.result, json!(6));
    assert_eq!(most.get(), 2, "at most two calls at once");
}

#[tokio::test]
async fn a_broken_script_says_what_and_where() {
    let failed = go("const a = 1;\nconst b = ;", &Limits::default())
        .await
        .unwrap_err();
    assert_eq!(failed.failure.code(), "script_error");
    let Failure::Script { message, .. } = &failed.failure else {
        unreachable!()
    };
    assert!(message.starts_with("SyntaxError"), "{message}");
    let failed = go("const a = 1;\nconst b = 2;\nnull.x;", &Limits::default())
        .await
        .unwrap_err();
    let Failure::Script { message, line, .. } = &failed.failure else {
        unreachable!("{failed:?}")
    };
    assert!(message.starts_with("TypeError"), "{message}");
    assert_eq!(*line, Some(3), "{message}");
    let thrown = go("throw 'plain';", &Limits::default()).await.unwrap_err();
    assert_eq!(thrown.failure.code(), "script_error");
    assert!(thrown.failure.to_string().contains("plain"));
    // A rejected promise nobody awaits does not hang or fail the run.
    let out = go(
        "Promise.reject(new Error('ignored')); return 1;",
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.result, json!(1));
}

#[tokio::test]
async fn nothing_of_the_outside_world_is_in_reach() {
    let out = go(
        r#"return [typeof require, typeof process, typeof fetch, typeof XMLHttpRequest,
                   typeof WebAssembly, typeof __host, typeof __log, typeof std, typeof os,
                   await tools.fx.then];"#,
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        out.result,
        json!([
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            null
        ])
    );
    let import = go(
        "const m = await import('os'); return 1;",
        &Limits::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(import.failure.code(), "script_error");
}

#[tokio::test]
async fn logs_are_bounded() {
    let limits = Limits {
        log_bytes: 100,
        ..Limits::default()
    };
    let out = go(
        "for (let i = 0; i < 50; i++) console.log('line', i); return 1;",
        &limits,
    )
    .await
    .unwrap();
    let kept: usize = out
        .logs
        .iter()
        .take(out.logs.len() - 1)
        .map(String::len)
        .sum();
    assert!(kept <= 100);
    assert!(
        out.logs
            .last()
            .unwrap()
            .contains("more bytes of log left out")
    );
}
