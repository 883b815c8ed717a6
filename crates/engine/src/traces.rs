//! OpenTelemetry traces. A client's W3C trace context (its `traceparent` HTTP header, or
//! `params._meta.traceparent` as MCP's SEP-414 carries it) is continued: each call Offload
//! serves is a span of that trace, each request it makes upstream a span beneath it, and the
//! context goes on to the upstream (`_meta.traceparent` to every one; the `traceparent` header
//! too for one over HTTP). With no context from the client, a call starts a trace of its own
//! only while spans are exported.
//!
//! Spans are exported as OTLP/HTTP JSON to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` (`OTEL_EXPORTER_OTLP_HEADERS` sent along,
//! `OTEL_SERVICE_NAME` naming the service, `OTEL_TRACES_EXPORTER=none` turning it off), in
//! batches, from a bounded queue: a collector that is slow or down drops spans (counted in the
//! log), never delays a call. The OpenTelemetry SDK's exporter was weighed and not taken: its
//! JSON exporter brings tonic and prost along for one POST of a documented JSON shape.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A span's place in a trace: what `traceparent` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    trace: [u8; 16],
    span: [u8; 8],
    sampled: bool,
}

impl TraceContext {
    /// Reads a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`; a later version's first four
    /// fields). `None` for anything else, all-zero ids included: the trace then starts here.
    pub fn parse(header: &str) -> Option<Self> {
        let header = header.trim();
        let mut parts = header.split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let lower_hex = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if version.len() != 2
            || !lower_hex(version)
            || version == "ff"
            || (version == "00" && parts.next().is_some())
            || flags.len() != 2
            || !lower_hex(flags)
            || !lower_hex(trace)
            || !lower_hex(span)
        {
            return None;
        }
        let mut out = TraceContext {
            trace: [0; 16],
            span: [0; 8],
            sampled: u8::from_str_radix(flags, 16).ok()? & 1 == 1,
        };
        hex::decode_to_slice(trace, &mut out.trace).ok()?;
        hex::decode_to_slice(span, &mut out.span).ok()?;
        (out.trace != [0; 16] && out.span != [0; 8]).then_some(out)
    }

    /// This context as a `traceparent` value.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            hex::encode(self.trace),
            hex::encode(self.span),
            u8::from(self.sampled)
        )
    }

    fn root() -> Self {
        let mut trace = [0u8; 16];
        let _ = getrandom::fill(&mut trace);
        TraceContext {
            trace,
            span: new_span_id(),
            sampled: true,
        }
    }

    fn child(&self) -> Self {
        TraceContext {
            span: new_span_id(),
            ..*self
        }
    }
}

fn new_span_id() -> [u8; 8] {
    let mut span = [0u8; 8];
    while span == [0; 8] {
        let _ = getrandom::fill(&mut span);
    }
    span
}

/// OTLP's span kinds used here.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Server = 2,
    Client = 3,
}

/// A span under way; sent when ended (when spans are exported and the trace is sampled).
pub struct Span {
    context: TraceContext,
    parent: Option<[u8; 8]>,
    name: String,
    kind: Kind,
    start: SystemTime,
    attributes: Vec<(&'static str, String)>,
}

tokio::task_local! {
    static CURRENT: TraceContext;
}

impl Span {
    /// The span of one call of `tool` Offload serves, continuing `parent` (a client's
    /// `traceparent`); `None` (and nothing made) when there is no trace to continue and none
    /// is exported.
    pub fn serving(parent: Option<&str>, tool: &str) -> Option<Self> {
        let parent = parent.and_then(TraceContext::parse);
        let context = match parent {
            Some(p) => p.child(),
            None if exporter().is_some() => TraceContext::root(),
            None => return None,
        };
        Some(Span {
            context,
            parent: parent.map(|p| p.span),
            name: format!("tools/call {tool}"),
            kind: Kind::Server,
            start: SystemTime::now(),
            attributes: vec![
                ("mcp.method.name", "tools/call".into()),
                ("gen_ai.tool.name", tool.to_owned()),
            ],
        })
    }

    /// A span for a call of `tool` on `server` made on behalf of the span the current task
    /// runs in ([`Span::scope`]); `None` (and nothing made) outside one.
    pub fn upstream(server: &str, tool: &str) -> Option<Self> {
        let parent = CURRENT.try_with(|c| *c).ok()?;
        Some(Span {
            context: parent.child(),
            parent: Some(parent.span),
            name: format!("tools/call {tool}"),
            kind: Kind::Client,
            start: SystemTime::now(),
            attributes: vec![
                ("mcp.method.name", "tools/call".into()),
                ("gen_ai.tool.name", tool.to_owned()),
                ("offload.server", server.to_owned()),
            ],
        })
    }

    pub fn context(&self) -> TraceContext {
        self.context
    }

    /// Runs `work` inside this span: requests it makes upstream are its children.
    pub async fn scope<F: Future>(&self, work: F) -> F::Output {
        CURRENT.scope(self.context, work).await
    }

    /// Ends the span of a call that answered `result` (a failure is said only when the span
    /// is sent).
    pub fn end<E: std::fmt::Display>(self, result: &Result<rmcp::model::CallToolResult, E>) {
        let Some(exporter) = exporter() else { return };
        if !self.context.sampled {
            return;
        }
        let error = failure(result);
        let nanos = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
                .to_string()
        };
        let attributes: Vec<Value> = self
            .attributes
            .iter()
            .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
            .collect();
        let status = match error.as_deref() {
            Some(message) => {
                json!({"code": 2, "message": offload_formats::clip::clip(message, 512)})
            }
            None => json!({"code": 1}),
        };
        let mut span = json!({
            "traceId": hex::encode(self.context.trace),
            "spanId": hex::encode(self.context.span),
            "name": self.name,
            "kind": self.kind as u8,
            "startTimeUnixNano": nanos(self.start),
            "endTimeUnixNano": nanos(SystemTime::now()),
            "attributes": attributes,
            "status": status,
        });
        if let Some(parent) = self.parent {
            span["parentSpanId"] = json!(hex::encode(parent));
        }
        exporter.send(span);
    }
}

/// The `traceparent` an outgoing message carries, if any (in a call's params, or the envelope's
/// `_meta`).
pub fn traceparent_of(message: &rmcp::model::ClientJsonRpcMessage) -> Option<&str> {
    use rmcp::model::{ClientRequest, GetMeta, JsonRpcMessage};
    let JsonRpcMessage::Request(r) = message else {
        return None;
    };
    match &r.request {
        ClientRequest::CallToolRequest(call) => call
            .params
            .meta
            .as_ref()
            .and_then(|m| m.get_traceparent())
            .or_else(|| r.request.get_meta().get_traceparent()),
        other => other.get_meta().get_traceparent(),
    }
}

/// Why a tool call failed, for its span: the error, or the tool's own error answer.
fn failure<E: std::fmt::Display>(
    result: &Result<rmcp::model::CallToolResult, E>,
) -> Option<String> {
    match result {
        Err(e) => Some(e.to_string()),
        Ok(r) if r.is_error == Some(true) => Some("the tool answered an error".into()),
        Ok(_) => None,
    }
}

/// Where spans go, and the queue to the task that sends them.
struct Exporter {
    queue: mpsc::Sender<Value>,
    dropped: AtomicU64,
}

/// How many spans may wait to be sent; more are dropped.
const QUEUE: usize = 4096;
/// Spans are sent at least this often, at most this many at a time.
const EVERY: Duration = Duration::from_millis(500);
const BATCH: usize = 512;

impl Exporter {
    fn send(&self, span: Value) {
        if self.queue.try_send(span).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed);
            if n.is_power_of_two() {
                tracing::warn!("{} span(s) dropped: the trace exporter is behind", n + 1);
            }
        }
    }
}

/// The exporter the environment asks for, started (on the current runtime) the first time a
/// span needs it; `None` when spans are not exported.
fn exporter() -> Option<&'static Exporter> {
    static EXPORTER: OnceLock<Option<Exporter>> = OnceLock::new();
    EXPORTER
        .get_or_init(|| {
            let settings = Settings::from_env(|k| std::env::var(k).ok())?;
            let runtime = tokio::runtime::Handle::try_current().ok()?;
            let (queue, spans) = mpsc::channel(QUEUE);
            runtime.spawn(settings.run(spans));
            Some(Exporter {
                queue,
                dropped: AtomicU64::new(0),
            })
        })
        .as_ref()
}

/// What the `OTEL_*` variables ask for.
#[derive(Debug, PartialEq)]
struct Settings {
    url: String,
    headers: Vec<(String, String)>,
    service: String,
}

impl Settings {
    fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let set = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        if set("OTEL_TRACES_EXPORTER").is_some_and(|e| e.trim() == "none")
            || set("OTEL_SDK_DISABLED").is_some_and(|d| d.trim().eq_ignore_ascii_case("true"))
        {
            return None;
        }
        let url = match set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            Some(url) => url.trim().to_owned(),
            None => format!(
                "{}/v1/traces",
                set("OTEL_EXPORTER_OTLP_ENDPOINT")?
                    .trim()
                    .trim_end_matches('/')
            ),
        };
        if let Some(p) = set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .filter(|p| p.trim() != "http/json")
        {
            tracing::warn!("traces are sent as OTLP http/json, not {p}");
        }
        // `k=v,k2=v2`, values percent-encoded (the variables' rule).
        let headers = set("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| set("OTEL_EXPORTER_OTLP_HEADERS"))
            .unwrap_or_default()
            .split(',')
            .filter_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                let v = percent_encoding::percent_decode_str(v.trim())
                    .decode_utf8()
                    .ok()?;
                Some((k.trim().to_owned(), v.into_owned()))
            })
            .collect();
        let service = set("OTEL_SERVICE_NAME").unwrap_or_else(|| "offload".into());
        Some(Settings {
            url,
            headers,
            service,
        })
    }

    /// Sends what arrives on `spans`, a batch at a time, until the queue closes.
    async fn run(self, mut spans: mpsc::Receiver<Value>) {
        let client = crate::crypto::http_client()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        tracing::info!(url = %self.url, "exporting traces");
        let mut failing = false;
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            if spans.recv_many(&mut batch, BATCH).await == 0 {
                return;
            }
            // A moment for the rest of a burst.
            let deadline = tokio::time::Instant::now() + EVERY;
            while batch.len() < BATCH {
                match tokio::time::timeout_at(deadline, spans.recv()).await {
                    Ok(Some(span)) => batch.push(span),
                    _ => break,
                }
            }
            let body = self.body(std::mem::take(&mut batch));
            let mut request = client.post(&self.url).json(&body);
            for (k, v) in &self.headers {
                request = request.header(k, v);
            }
            match request.send().await.and_then(|r| r.error_for_status()) {
                Ok(_) if failing => {
                    tracing::info!("traces are accepted again");
                    failing = false;
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    // The URL only: a header may hold a key.
                    tracing::warn!("traces not accepted by {}: {}", self.url, e.without_url());
                    failing = true;
                }
                Err(_) => {}
            }
        }
    }

    /// An OTLP `ExportTraceServiceRequest` in JSON.
    fn body(&self, spans: Vec<Value>) -> Value {
        json!({"resourceSpans": [{
            "resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": self.service}},
                {"key": "service.version", "value": {"stringValue": env!("CARGO_PKG_VERSION")}},
            ]},
            "scopeSpans": [{
                "scope": {"name": "offload", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_as_w3c_says_and_written_back() {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let cx = TraceContext::parse(header).unwrap();
        assert_eq!(cx.traceparent(), header);
        assert!(cx.sampled);
        let child = cx.child();
        assert_eq!(child.trace, cx.trace);
        assert_ne!(child.span, cx.span);
        // A later version's first fields are read; its extra fields ignored.
        assert!(TraceContext::parse(&format!("cc-{}-what-ever", &header[3..])).is_some());
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_environment_names_the_collector() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Settings::from_env(env(&[])), None);
        let s = Settings::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%3Db, x = y"),
            ("OTEL_SERVICE_NAME", "team-offload"),
        ]))
        .unwrap();
        assert_eq!(s.url, "http://collector:4318/v1/traces");
        assert_eq!(
            s.headers,
            [("api-key".into(), "a=b".into()), ("x".into(), "y".into())]
        );
        assert_eq!(s.service, "team-offload");
        let s = Settings::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/traces"),
        ]))
        .unwrap();
        assert_eq!(s.url, "http://b/traces");
        assert_eq!(
            Settings::from_env(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ])),
            None
        );
    }
}
