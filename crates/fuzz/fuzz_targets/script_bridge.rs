//! A model's script and the host bridge (`offload-script`): any bytes as a script's body, run
//! under tight limits against a host that answers each request with its own arguments.
//!
//! Checks: no panic or crash on any script; every run ends within its deadline (plus the
//! runtime's start); a run's tool calls and stores never exceed its limit, and a failure always
//! has one of the typed codes.
#![no_main]

use std::rc::Rc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use offload_script::{Host, HostError, HostFuture, Limits, Request};

struct Echo;

impl Host for Echo {
    fn ask(&self, request: Request) -> HostFuture {
        Box::pin(async move {
            match request {
                Request::Tool { args, .. } => Ok(args),
                other => Err(HostError {
                    code: "unknown".into(),
                    message: other.label(),
                }),
            }
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(code) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        deadline: Duration::from_millis(200),
        memory: 8 << 20,
        calls: 5,
        concurrency: 2,
        log_bytes: 1024,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let answer = runtime.block_on(offload_script::run(code, Rc::new(Echo), &limits));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a run took {:?}",
        started.elapsed()
    );
    // Tool calls and stores are what the limit counts.
    let counted = |calls: &[offload_script::Call]| -> usize {
        calls
            .iter()
            .filter(|c| c.call.starts_with("tools.") || c.call == "offload.store")
            .map(|c| c.count as usize)
            .sum()
    };
    match answer {
        Ok(outcome) => assert!(counted(&outcome.calls) <= limits.calls),
        Err(failed) => {
            assert!(counted(&failed.calls) <= limits.calls);
            assert!(matches!(
                failed.failure.code(),
                "script_timeout" | "script_memory" | "too_many_calls" | "script_error" | "tool_error"
            ));
        }
    }
});
