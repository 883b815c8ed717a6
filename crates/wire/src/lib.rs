//! Offload's stdio framing for rmcp: one JSON-RPC message per line, as rmcp's own
//! `AsyncRwTransport` frames them, built for large messages:
//!
//! - **In**, a line is parsed once, its largest string unescaped into the line's own buffer
//!   ([`lean`]), and its bulk (a tool result's content and structured content, a tool call's
//!   arguments) is moved into the typed message instead of being copied through rmcp's serde
//!   enums once per level ([`bulk`]). A 10 MB tool result costs its size while it is read, not
//!   six times.
//! - **Out**, JSON registered as a [`Splice`] is written in place of its placeholder, so a
//!   caller can send a value it holds as JSON text without building it as a tree ([`splice`]).
//! - A line buffer that grew for a large message leaves with it (as its largest string).
//!
//! Like rmcp's transport: a line longer than the limit is dropped (and logged), a line that is
//! not JSON is ignored, a request that cannot be read is answered with "invalid request".

pub mod bulk;
pub mod lean;
pub mod splice;

use std::marker::PhantomData;
use std::sync::Arc;

use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

pub use bulk::{Bulk, EXECUTION_META};
pub use splice::Splice;

/// The default limit of one incoming line (rmcp's default too).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// A line-delimited JSON-RPC transport over a reader and a writer.
pub struct Lines<Role, R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    /// Dropping the rest of a line that went over the limit (kept across cancelled reads).
    discarding: bool,
    write: Arc<Mutex<Option<W>>>,
    _role: PhantomData<fn() -> Role>,
}

enum LineRead {
    Line,
    Oversized,
    Eof,
    Failed(std::io::Error),
}

impl<Role, R, W> Lines<Role, R, W>
where
    Role: Bulk,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max_line: DEFAULT_MAX_LINE,
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            _role: PhantomData,
        }
    }

    /// Sets the limit of one incoming line.
    pub fn with_max_line_length(mut self, max: usize) -> Self {
        self.max_line = max;
        self
    }

    /// Reads up to the next newline into `self.line`, never holding more than the limit.
    /// Cancel-safe: a partial line stays in the buffer for the next call.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return LineRead::Eof,
                Ok(available) => available,
                Err(e) => return LineRead::Failed(e),
            };
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut outcome = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                outcome = Some(LineRead::Oversized);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(LineRead::Line);
                }
            }
            self.read.consume(take);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    /// Decodes the line read; `None` for a line to skip.
    fn decode_line(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        // The line ends with its newline and maybe a CR; a BOM may start it.
        for end in [b'\n', b'\r'] {
            if self.line.last() == Some(&end) {
                self.line.pop();
            }
        }
        if self.line.starts_with(b"\xef\xbb\xbf") {
            self.line.drain(..3);
        }
        if self.line.iter().all(u8::is_ascii_whitespace) {
            self.line.clear();
            return None;
        }
        // A small line's buffer is kept for the next one; a large one goes into the message
        // (as its largest string).
        let parsed = if self.line.len() < lean::LARGE {
            let parsed = serde_json::from_slice::<Value>(&self.line);
            self.line.clear();
            parsed
        } else {
            lean::parse(std::mem::take(&mut self.line))
        };
        let message = match parsed {
            Ok(message) => message,
            Err(e) => {
                // As rmcp and the other SDKs do: no id to answer, and answering could start
                // an error storm with a peer that echoes.
                tracing::debug!("ignoring an incoming line that is not JSON: {e}");
                return None;
            }
        };
        let request_id = message
            .get("method")
            .and(message.get("id"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        match Role::decode(message) {
            Ok(message) => Some(message),
            Err(e) => {
                if let Some(id) = request_id {
                    tracing::debug!("answering a request that cannot be read: {e}");
                    let reply = TxJsonRpcMessage::<Role>::error(
                        ErrorData::invalid_request(format!("invalid request: {e}"), None),
                        Some(id),
                    );
                    let write = self.write.clone();
                    tokio::spawn(async move {
                        if let Ok(bytes) = serde_json::to_vec(&reply) {
                            let _ = write_line(&write, bytes).await;
                        }
                    });
                } else {
                    tracing::debug!("ignoring an incoming message that is not MCP: {e}");
                }
                None
            }
        }
    }
}

impl<Role, R, W> Transport<Role> for Lines<Role, R, W>
where
    Role: Bulk,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other);
        drop(item);
        async move { write_line(&write, bytes?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Oversized => {
                    tracing::error!(
                        max_line_length = self.max_line,
                        "an incoming message is longer than the limit; it was dropped"
                    );
                    continue;
                }
                LineRead::Eof => return None,
                LineRead::Failed(e) => {
                    tracing::error!("reading messages failed: {e}");
                    return None;
                }
            }
            if let Some(message) = self.decode_line() {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

/// The size of `value` serialised as JSON, counted without building the text.
pub fn json_size(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Writes one serialised message and its newline, with registered splices in place.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    let parts = splice::parts(&bytes);
    let mut guard = write.lock().await;
    let Some(w) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    if let [splice::Part::Own(_)] = parts.as_slice() {
        bytes.push(b'\n');
        w.write_all(&bytes).await?;
    } else {
        for part in &parts {
            match part {
                splice::Part::Own(range) => w.write_all(&bytes[range.clone()]).await?,
                splice::Part::Json(json) => w.write_all(json).await?,
            }
        }
        w.write_all(b"\n").await?;
    }
    w.flush().await
}

#[cfg(test)]
mod tests;
