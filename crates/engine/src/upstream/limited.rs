//! A guard on an upstream's stdout: a single message (line) longer than the answer limit ends
//! the connection with a clear error instead of being buffered without bound (or, as rmcp does
//! past its own limit, silently dropped so that the call hangs until its timeout).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

pub struct LimitedLines<R> {
    inner: R,
    limit: u64,
    current: u64,
    /// Set to the limit when a line went over it (read by the supervisor for its error).
    pub exceeded: Arc<AtomicU64>,
}

impl<R> LimitedLines<R> {
    pub fn new(inner: R, limit: u64) -> Self {
        Self {
            inner,
            limit,
            current: 0,
            exceeded: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let fresh = &buf.filled()[before..];
                match memchr::memrchr(b'\n', fresh) {
                    Some(last) => this.current = (fresh.len() - last - 1) as u64,
                    None => this.current += fresh.len() as u64,
                }
                if this.current > this.limit {
                    this.exceeded.store(this.limit, Ordering::SeqCst);
                    // A reader that fails must not also hand out bytes.
                    buf.set_filled(before);
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("an upstream message is larger than {} bytes", this.limit),
                    )));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn passes_short_lines_and_stops_at_a_long_one() {
        let data = b"short\nline\n".repeat(100);
        let mut r = LimitedLines::new(&data[..], 10);
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, data);

        let long = [b"ok\n".as_slice(), &[b'x'; 50]].concat();
        let mut r = LimitedLines::new(&long[..], 10);
        let err = r.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(err.to_string().contains("larger than 10 bytes"));
        assert_eq!(r.exceeded.load(Ordering::SeqCst), 10);
    }
}
