//! A bounded ring of an upstream's most recent stderr lines, each with the time it was read: for
//! the app's server view (its Output tab, searchable and saved whole) and for error messages. It never grows past its byte budget, whatever the server prints.

use std::collections::VecDeque;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One line the server wrote, and when Offload read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StderrLine {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub time: DateTime<Utc>,
    pub text: String,
}

#[derive(Debug, Default)]
struct Lines {
    lines: VecDeque<StderrLine>,
    /// The text bytes in `lines` (kept, not summed on each push).
    bytes: usize,
    /// Every line ever pushed, counted (older ones may have made room).
    pushed: u64,
}

/// How many lines `StderrRing::cause` quotes from the first error line on.
pub const CAUSE_LINES: usize = 4;

/// Whether a line reads as the statement of an error: it starts with a word ending in `Error`
/// or `Exception` followed by `:` or ` [` (JavaScript, Python, Java), or with `error:`,
/// `fatal:`, `panic:`, `Error:`, or is a Rust panic.
fn says_error(line: &str) -> bool {
    let t = line.trim_start();
    let lower = t.to_ascii_lowercase();
    if [
        "error:",
        "error[",
        "fatal:",
        "fatal error",
        "panic:",
        "critical:",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
        || t.contains("panicked at")
    {
        return true;
    }
    let word: &str = t
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .next()
        .unwrap_or("");
    let rest = &t[word.len()..];
    (word.ends_with("Error") || word.ends_with("Exception"))
        && (rest.starts_with(':') || rest.starts_with(" ["))
}

/// A stack frame (`    at f (file:1:2)`, `  File "x.py", line 3`) or punctuation alone
/// (`^`, `}`): where, not what.
fn is_frame(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("at ")
        || t.starts_with("File \"")
        || line.starts_with("    ")
        || !t.chars().any(char::is_alphanumeric)
}

#[derive(Debug)]
pub struct StderrRing {
    lines: Mutex<Lines>,
    max_bytes: usize,
    max_line: usize,
    /// Incremented each time a drained stream reaches its end (the process closed stderr).
    ended: tokio::sync::watch::Sender<u64>,
}

impl StderrRing {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            lines: Mutex::default(),
            max_bytes,
            max_line: 2048,
            ended: tokio::sync::watch::Sender::new(0),
        }
    }

    /// How many drained streams have ended so far.
    pub fn ends(&self) -> u64 {
        *self.ended.borrow()
    }

    /// Waits (at most `limit`) until more than `seen` streams have ended, so that what a dying
    /// process printed last is in the ring before an error message quotes it.
    pub async fn wait_end(&self, seen: u64, limit: std::time::Duration) {
        let mut rx = self.ended.subscribe();
        let _ = tokio::time::timeout(limit, rx.wait_for(|n| *n > seen)).await;
    }

    pub fn push(&self, line: &str) {
        let text = offload_formats::clip::clip(line, self.max_line).into_owned();
        let mut kept = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        kept.bytes += text.len();
        kept.pushed += 1;
        kept.lines.push_back(StderrLine {
            time: Utc::now(),
            text,
        });
        while kept.bytes > self.max_bytes && kept.lines.len() > 1 {
            if let Some(old) = kept.lines.pop_front() {
                kept.bytes -= old.text.len();
            }
        }
    }

    /// The last `n` lines, oldest first, joined with newlines.
    pub fn tail(&self, n: usize) -> String {
        let kept = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let skip = kept.lines.len().saturating_sub(n);
        kept.lines
            .iter()
            .skip(skip)
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The lines pushed after the first `since` that are still kept (the last 50 when `None`).
    pub fn fresh(&self, since: Option<u64>) -> Vec<String> {
        let kept = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = since.map_or(50, |s| {
            usize::try_from(kept.pushed.saturating_sub(s)).unwrap_or(usize::MAX)
        });
        kept.lines
            .iter()
            .skip(kept.lines.len().saturating_sub(fresh))
            .map(|l| l.text.clone())
            .collect()
    }

    /// How many lines were ever pushed: what `cause` takes to look only at later ones.
    pub fn pushed(&self) -> u64 {
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).pushed
    }

    /// The lines that say what went wrong, among those pushed after the first `since` (the
    /// last 50 kept when `None`): the first line that reads as an error (`Error [ERR_MODULE_NOT_FOUND]:
    /// ...`, `ModuleNotFoundError: ...`, `error: ...`, a panic) and the lines that follow it,
    /// stack frames left out, at most [`CAUSE_LINES`] and `budget` bytes; the last line too when
    /// it reads as an error and was not among them (a Python traceback ends with its cause).
    /// Without such a line, the last three lines, as before.
    pub fn cause(&self, since: Option<u64>, budget: usize) -> String {
        let lines = self.fresh(since);
        let lines: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.trim().is_empty())
            .collect();
        let picked: Vec<&str> = match lines.iter().position(|l| says_error(l)) {
            None => lines[lines.len().saturating_sub(3)..].to_vec(),
            Some(first) => {
                let mut picked: Vec<&str> = lines[first..]
                    .iter()
                    .copied()
                    .filter(|l| !is_frame(l))
                    .take(CAUSE_LINES)
                    .collect();
                if let Some(last) = lines.last()
                    && says_error(last)
                    && !picked.contains(last)
                {
                    picked.push("…");
                    picked.push(last);
                }
                picked
            }
        };
        offload_formats::clip::clip(&picked.join("\n"), budget).into_owned()
    }

    /// Every line kept, oldest first.
    pub fn lines(&self) -> Vec<StderrLine> {
        let kept = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        kept.lines.iter().cloned().collect()
    }

    /// Reads `stream` line by line into the ring until it closes (lossy UTF-8, no line limit
    /// beyond the clip, so a flood cannot grow memory).
    /// Each of `sensitive` (values of at least 4 bytes) is replaced by `[redacted]` first;
    /// `watch` sees each line as kept.
    pub async fn drain(
        &self,
        server: &str,
        stream: impl AsyncRead + Unpin,
        sensitive: &[String],
        watch: impl Fn(&str),
    ) {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line_bounded(&mut reader, &mut buf, 64 * 1024).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let mut text = String::from_utf8_lossy(&buf).into_owned();
                    for secret in sensitive.iter().filter(|s| s.len() >= 4) {
                        if text.contains(secret.as_str()) {
                            text = text.replace(secret.as_str(), "[redacted]");
                        }
                    }
                    let line = text.trim_end_matches(['\n', '\r']);
                    tracing::debug!(target: "offload::upstream::stderr", server, "{line}");
                    watch(line);
                    self.push(line);
                }
            }
        }
        self.ended.send_modify(|n| *n += 1);
    }
}

/// Like `read_until(b'\n')` but keeps at most `limit` bytes of one line (the rest is skipped).
async fn read_line_bounded<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(read);
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let n = chunk.len();
        let room = limit.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..n.min(room)]);
        reader.consume(n);
        read += n;
        if done {
            return Ok(read);
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_start_error_quotes_the_lines_that_say_what_went_wrong() {
        let node = "node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk' imported from /p/dist/index.js
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at defaultResolve (node:internal/modules/esm/resolve:1188:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:642:12)
    at #cachedDefaultResolve (node:internal/modules/esm/loader:591:25)
    at ModuleLoader.resolve (node:internal/modules/esm/loader:574:38)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:236:38)
    at ModuleJob._link (node:internal/modules/esm/module_job:130:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v20.20.2";
        let ring = StderrRing::new(64 * 1024);
        ring.push("an earlier run's line: Error: old");
        let since = ring.pushed();
        for l in node.lines() {
            ring.push(l);
        }
        let cause = ring.cause(Some(since), 400);
        assert!(
            cause.starts_with(
                "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk'"
            ),
            "{cause}"
        );
        assert!(!cause.contains("old") && !cause.contains(" at "), "{cause}");
        // Before, the last three lines: `  code: ...`, `}`, `Node.js v20.20.2`.
        assert!(!ring.tail(3).contains("Cannot find package"));

        let python = "Traceback (most recent call last):
  File \"/srv/server.py\", line 3, in <module>
    import missing_module
  File \"/srv/helper.py\", line 1, in <module>
    import other
ModuleNotFoundError: No module named 'other'";
        let ring = StderrRing::new(64 * 1024);
        for l in python.lines() {
            ring.push(l);
        }
        assert_eq!(
            ring.cause(None, 400),
            "ModuleNotFoundError: No module named 'other'"
        );

        let rust = "starting\nthread 'main' panicked at src/main.rs:3:5:\nno config\nnote: run with RUST_BACKTRACE=1";
        let ring = StderrRing::new(64 * 1024);
        for l in rust.lines() {
            ring.push(l);
        }
        assert!(
            ring.cause(None, 400)
                .starts_with("thread 'main' panicked at src/main.rs:3:5:\nno config")
        );

        // No error line: the last three lines, as before; and the budget holds.
        let ring = StderrRing::new(64 * 1024);
        for l in ["one", "two", "three", "four"] {
            ring.push(l);
        }
        assert_eq!(ring.cause(None, 400), "two\nthree\nfour");
        ring.push(&format!("Error: {}", "x".repeat(1000)));
        assert!(ring.cause(None, 100).len() <= 100);
    }
    use super::*;

    #[test]
    fn keeps_the_newest_lines_within_budget() {
        let ring = StderrRing::new(100);
        for i in 0..100 {
            ring.push(&format!("line {i:03} ........"));
        }
        let tail = ring.tail(1000);
        assert!(tail.len() <= 100 + 10, "{}", tail.len());
        assert!(tail.ends_with("line 099 ........"));
        assert_eq!(ring.tail(1), "line 099 ........");
        let lines = ring.lines();
        assert_eq!(lines.last().unwrap().text, "line 099 ........");
        assert!(lines.iter().map(|l| l.text.len()).sum::<usize>() <= 100);
        assert!(lines.windows(2).all(|w| w[0].time <= w[1].time));
    }

    #[tokio::test]
    async fn drain_bounds_a_huge_line() {
        let ring = StderrRing::new(10_000);
        let mut data = vec![b'x'; 1_000_000];
        data.extend_from_slice(b"\nlast\n");
        ring.drain("t", &data[..], &[], |_| {}).await;
        let tail = ring.tail(2);
        assert!(tail.len() < 3000);
        assert!(tail.ends_with("last"));
    }

    #[tokio::test]
    async fn sensitive_values_are_redacted_before_anything_keeps_them() {
        let ring = StderrRing::new(10_000);
        let data = b"token is sk-123456 and again sk-123456\nshort k\n";
        ring.drain("t", &data[..], &["sk-123456".into(), "k".into()], |_| {})
            .await;
        assert_eq!(
            ring.tail(2),
            "token is [redacted] and again [redacted]\nshort k"
        );
    }
}
