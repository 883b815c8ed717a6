//! The calls this process served, counted for Prometheus (`/metrics` of `offload serve --http`):
//! calls by server, tool and outcome, their latency, the bytes that went to and came from the
//! client, and the bytes kept out of the model's context. Each replica counts its own calls;
//! Prometheus adds them up.
//!
//! Labels come from what a model typed, so they are bounded: a server or tool that does not
//! exist is `unknown`, and past [`MAX_SERIES`] distinct ones further ones are `other`.

use std::collections::HashSet;
use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::{Event, EventKind};

/// Distinct (server, tool) pairs counted apart; the rest are counted as `other`.
pub const MAX_SERIES: usize = 4096;

/// The label of Offload's own tools (no upstream server).
const OWN: &str = "offload";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    server: String,
    tool: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabel {
    server: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    server: String,
    state: String,
}

pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    latency: Family<ServerLabel, Histogram>,
    bytes_in: Family<ServerLabel, Counter>,
    bytes_out: Family<ServerLabel, Counter>,
    bytes_kept: Family<ServerLabel, Counter>,
    states: Family<StateLabels, Gauge>,
    seen: Mutex<HashSet<(String, String)>>,
}

impl Default for Metrics {
    fn default() -> Self {
        let calls = Family::<CallLabels, Counter>::default();
        let latency = Family::<ServerLabel, Histogram>::new_with_constructor(|| {
            // 1 ms to about 65 s, doubling.
            Histogram::new(exponential_buckets(0.001, 2.0, 17))
        });
        let bytes_in = Family::<ServerLabel, Counter>::default();
        let bytes_out = Family::<ServerLabel, Counter>::default();
        let bytes_kept = Family::<ServerLabel, Counter>::default();
        let states = Family::<StateLabels, Gauge>::default();
        let mut registry = Registry::with_prefix("offload");
        registry.register(
            "calls",
            "Tool calls served, by server (offload for Offload's own tools), tool and outcome (ok, or the error code)",
            calls.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "How long tool calls took, by server",
            latency.clone(),
        );
        registry.register(
            "request_bytes",
            "Bytes of the tool calls' arguments as clients sent them, by server",
            bytes_in.clone(),
        );
        registry.register(
            "response_bytes",
            "Bytes of the answers that reached clients, by server",
            bytes_out.clone(),
        );
        registry.register(
            "bytes_kept_out_of_context",
            "Bytes that stayed out of the model's context: answers stored as files, files sent to tools",
            bytes_kept.clone(),
        );
        registry.register(
            "server_state",
            "1 for each configured server's current state (idle, starting, ready, error, sign_in_required, disabled)",
            states.clone(),
        );
        Self {
            registry,
            calls,
            latency,
            bytes_in,
            bytes_out,
            bytes_kept,
            states,
            seen: Mutex::new(HashSet::new()),
        }
    }
}

impl Metrics {
    /// Counts a finished call. A batch's parts and `$file` references are parts of a call
    /// counted on its own, so they are not counted again.
    pub fn observe(&self, event: &Event) {
        if matches!(event.kind, EventKind::BatchPart | EventKind::FileRef) {
            return;
        }
        let (server, tool) = self.labels(event);
        let by_server = ServerLabel {
            server: server.clone(),
        };
        self.calls
            .get_or_create(&CallLabels {
                server,
                tool,
                outcome: bounded_outcome(&event.outcome),
            })
            .inc();
        self.latency
            .get_or_create(&by_server)
            .observe(event.duration_ms as f64 / 1000.0);
        self.bytes_in
            .get_or_create(&by_server)
            .inc_by(event.bytes_in);
        self.bytes_out
            .get_or_create(&by_server)
            .inc_by(event.bytes_out);
        self.bytes_kept
            .get_or_create(&by_server)
            .inc_by(event.bytes_kept);
    }

    /// The text exposition format, with each configured server's state (`name`, `state`) as
    /// it is now.
    pub fn encode(&self, servers: &[(String, String)]) -> String {
        self.states.clear();
        for (server, state) in servers {
            self.states
                .get_or_create(&StateLabels {
                    server: server.clone(),
                    state: state.clone(),
                })
                .set(1);
        }
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!("cannot encode the metrics: {e}");
        }
        text
    }

    /// The server and tool a call is counted under: the upstream's for calls that named one
    /// (`unknown` when it does not exist), `offload` and the tool's name for Offload's own.
    fn labels(&self, event: &Event) -> (String, String) {
        let (server, tool) = match (&event.server, &event.upstream_tool) {
            _ if event.outcome == "unknown_server" => ("unknown".into(), "unknown".into()),
            (Some(server), _) if event.outcome == "unknown_tool" => {
                (server.clone(), "unknown".into())
            }
            (Some(server), Some(tool)) => (server.clone(), tool.clone()),
            (Some(server), None) => (server.clone(), event.tool.clone()),
            (None, _) => (OWN.into(), event.tool.clone()),
        };
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let pair = (server, tool);
        if seen.contains(&pair) {
            return pair;
        }
        if seen.len() >= MAX_SERIES {
            return ("other".into(), "other".into());
        }
        seen.insert(pair.clone());
        pair
    }
}

/// An outcome is `ok` or an error code: words of lower-case letters and underscores. Anything
/// else (it never should be) is counted as `error`.
fn bounded_outcome(outcome: &str) -> String {
    let word = !outcome.is_empty()
        && outcome.len() <= 40
        && outcome.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    if word { outcome } else { "error" }.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(server: Option<&str>, tool: Option<&str>, outcome: &str, ms: u64) -> Event {
        let mut e = super::super::sample(10);
        e.server = server.map(str::to_owned);
        e.upstream_tool = tool.map(str::to_owned);
        e.outcome = outcome.into();
        e.duration_ms = ms;
        e.bytes_out = 7;
        e.bytes_kept = 1000;
        e
    }

    /// The line of `text` that starts with `prefix`, its value.
    fn value(text: &str, prefix: &str) -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix} in\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    }

    #[test]
    fn calls_are_counted_by_server_tool_and_outcome_with_their_latency_and_bytes() {
        let m = Metrics::default();
        m.observe(&call(Some("git"), Some("log"), "ok", 3));
        m.observe(&call(Some("git"), Some("log"), "ok", 300));
        m.observe(&call(Some("git"), Some("log"), "upstream_timeout", 2000));
        let mut own = call(None, None, "ok", 0);
        own.tool = "query_file".into();
        m.observe(&own);
        let mut part = call(Some("git"), Some("log"), "ok", 1);
        part.kind = EventKind::BatchPart;
        m.observe(&part);
        let text = m.encode(&[("git".into(), "ready".into())]);
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="git",tool="log",outcome="ok"}"#
            ),
            2.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="git",tool="log",outcome="upstream_timeout"}"#
            ),
            1.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="offload",tool="query_file",outcome="ok"}"#
            ),
            1.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_call_duration_seconds_count{server="git"}"#
            ),
            3.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_call_duration_seconds_bucket{le="0.004",server="git"}"#
            ),
            1.0,
            "3 ms in the 4 ms bucket"
        );
        assert_eq!(
            value(&text, r#"offload_call_duration_seconds_sum{server="git"}"#),
            2.303
        );
        assert_eq!(
            value(
                &text,
                r#"offload_bytes_kept_out_of_context_total{server="git"}"#
            ),
            3000.0
        );
        assert_eq!(
            value(&text, r#"offload_response_bytes_total{server="git"}"#),
            21.0
        );
        assert_eq!(
            value(&text, r#"offload_server_state{server="git",state="ready"}"#),
            1.0
        );
        assert!(
            text.contains("# HELP offload_calls Tool calls served"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn labels_a_model_typed_stay_bounded() {
        let m = Metrics::default();
        for n in 0..10 {
            m.observe(&call(
                Some(&format!("nope{n}")),
                Some("x"),
                "unknown_server",
                1,
            ));
        }
        m.observe(&call(Some("git"), Some(&"y".repeat(50)), "unknown_tool", 1));
        m.observe(&call(Some("git"), Some("log"), "Weird outcome\n", 1));
        let text = m.encode(&[]);
        assert!(!text.contains("nope"), "{text}");
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="unknown",tool="unknown",outcome="unknown_server"}"#
            ),
            10.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="git",tool="unknown",outcome="unknown_tool"}"#
            ),
            1.0
        );
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="git",tool="log",outcome="error"}"#
            ),
            1.0
        );
        for n in 0..MAX_SERIES + 10 {
            m.observe(&call(Some("s"), Some(&format!("t{n}")), "ok", 1));
        }
        let text = m.encode(&[]);
        assert_eq!(
            value(
                &text,
                r#"offload_calls_total{server="other",tool="other",outcome="ok"}"#
            ),
            13.0,
            "the three pairs seen first and the first 4,093 others counted apart, the rest as other"
        );
    }
}
