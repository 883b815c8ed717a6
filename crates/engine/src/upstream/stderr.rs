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
