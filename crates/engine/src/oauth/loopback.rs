//! The loopback redirect of a sign-in (RFC 8252 §7.3): a one-shot HTTP listener on
//! `127.0.0.1:<free port>` that takes the browser's `GET /callback?code=…&state=…`, hands the
//! URL to the sign-in, and answers the browser with the sign-in's outcome in words.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use tokio::sync::{mpsc, oneshot};

/// The redirect the browser lands on, with a way to answer it.
pub struct Landing {
    /// The full callback URL (`http://127.0.0.1:PORT/callback?code=…`).
    pub url: String,
    reply: oneshot::Sender<Result<String, String>>,
}

impl Landing {
    /// Shows the browser how the sign-in ended.
    pub fn answer(self, outcome: Result<String, String>) {
        let _ = self.reply.send(outcome);
    }
}

pub struct Loopback {
    pub redirect_uri: String,
    landings: mpsc::Receiver<Landing>,
    /// Told when the connection that carried the redirect has been answered and closed.
    delivered: Option<oneshot::Receiver<()>>,
    stop: Option<oneshot::Sender<()>>,
}

impl Loopback {
    /// Listens on a free loopback port.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let port = listener.local_addr()?.port();
        let (tx, landings) = mpsc::channel(4);
        let (stop, stopped) = oneshot::channel::<()>();
        let (delivered_tx, delivered) = oneshot::channel();
        tokio::spawn(serve(listener, port, tx, delivered_tx, stopped));
        Ok(Self {
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            landings,
            delivered: Some(delivered),
            stop: Some(stop),
        })
    }

    /// The next redirect that reached the listener.
    pub async fn next(&mut self) -> Option<Landing> {
        self.landings.recv().await
    }

    /// Waits (briefly) until the browser has the answer to its redirect, so that a process
    /// exiting right after a sign-in does not cut the page off.
    pub async fn delivered(&mut self) {
        if let Some(delivered) = self.delivered.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), delivered).await;
        }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    port: u16,
    landings: mpsc::Sender<Landing>,
    delivered: oneshot::Sender<()>,
    mut stopped: oneshot::Receiver<()>,
) {
    let landings = Arc::new(Mutex::new(Some(landings)));
    let delivered = Arc::new(Mutex::new(Some(delivered)));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = &mut stopped => return,
        };
        let landings = landings.clone();
        let delivered = delivered.clone();
        // Whether this connection carried the redirect (its answer closes the connection).
        let landed = Arc::new(AtomicBool::new(false));
        let here = landed.clone();
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let landings = landings.clone();
            let here = here.clone();
            async move { Ok::<_, Infallible>(land(req, port, &landings, &here).await) }
        });
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
            if landed.load(Ordering::Relaxed)
                && let Some(tx) = delivered.lock().unwrap_or_else(|p| p.into_inner()).take()
            {
                let _ = tx.send(());
            }
        });
    }
}

async fn land(
    req: Request<Incoming>,
    port: u16,
    landings: &Mutex<Option<mpsc::Sender<Landing>>>,
    landed: &AtomicBool,
) -> Response<Full<Bytes>> {
    if req.uri().path() != "/callback" {
        return page(
            StatusCode::NOT_FOUND,
            "Not found",
            "This is Offload's sign-in listener.",
        );
    }
    // Only the first redirect counts; the listener closes after it.
    let Some(sender) = landings.lock().unwrap_or_else(|p| p.into_inner()).take() else {
        return page(
            StatusCode::GONE,
            "Already used",
            "This sign-in has already finished; start it again from Offload.",
        );
    };
    landed.store(true, Ordering::Relaxed);
    let (reply, outcome) = oneshot::channel();
    let url = format!(
        "http://127.0.0.1:{port}{}",
        req.uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/callback")
    );
    if sender.send(Landing { url, reply }).await.is_err() {
        return page(
            StatusCode::GONE,
            "Expired",
            "This sign-in was cancelled; start it again from Offload.",
        );
    }
    match outcome.await {
        Ok(Ok(what)) => page(
            StatusCode::OK,
            "Signed in",
            &format!("{what} You can close this tab."),
        ),
        Ok(Err(why)) => page(StatusCode::BAD_REQUEST, "Sign-in failed", &why),
        Err(_) => page(
            StatusCode::GONE,
            "Expired",
            "This sign-in was cancelled; start it again from Offload.",
        ),
    }
}

fn page(status: StatusCode, title: &str, text: &str) -> Response<Full<Bytes>> {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>Offload: {t}</title>\
         <body style=\"font:16px system-ui;margin:4em auto;max-width:32em\"><h1>{t}</h1><p>{x}</p>",
        t = escape(title),
        x = escape(text)
    );
    Response::builder()
        .status(status)
        .header("content-type", "text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .header("connection", "close")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_default()
}
