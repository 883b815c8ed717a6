//! The HTTP client of a connection to a remote server. It sends each request's W3C trace context
//! (`_meta.traceparent`, see `traces`) as the `traceparent` header too, where HTTP servers,
//! proxies and their tracing look for it.
//!
//! And for a server that signs in, it notices on a live connection that the server refused the
//! sign-in. rmcp's HTTP worker ends the connection when a request is refused, and the caller
//! then only sees "closed"; this wrapper remembers why, so the call answers `auth_required` in
//! words, the server shows `sign_in_required`, and a refusal for want of a scope is kept for the
//! next sign-in (step-up).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// Why the server refused the connection's credentials, with its `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no token, or one it no longer accepts (and no refresh helped).
    SignInRequired { challenge: String },
    /// 403 `insufficient_scope`, with the scope it wants when it said.
    InsufficientScope {
        scope: Option<String>,
        challenge: String,
    },
}

impl Refusal {
    pub fn challenge(&self) -> &str {
        match self {
            Self::SignInRequired { challenge } | Self::InsufficientScope { challenge, .. } => {
                challenge
            }
        }
    }
}

/// Shared between a connection's HTTP client and its supervisor.
#[derive(Default)]
pub struct AuthWatch(Mutex<Option<Refusal>>);

impl AuthWatch {
    /// The refusal seen since the last call, if any (taken).
    pub fn take(&self) -> Option<Refusal> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// An HTTP client that tells an [`AuthWatch`] about refusals, and keeps what a refusal said in
/// the server's keychain entry before the failed request returns (so a sign-in started right
/// after, even from another process, starts from it).
#[derive(Clone)]
pub struct Watched<C> {
    pub inner: C,
    /// For a server that signs in: where its refusals are told.
    pub sign_in: Option<SignIn>,
}

/// Where a signing-in server's refusals go.
#[derive(Clone)]
pub struct SignIn {
    pub watch: Arc<AuthWatch>,
    pub server: String,
    pub url: String,
    pub secrets: Arc<dyn crate::config::SecretSource>,
}

impl<C> Watched<C> {
    /// Passes a request's outcome on, after noting it if it is a refusal.
    async fn noting<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        result: Result<T, StreamableHttpError<E>>,
    ) -> Result<T, StreamableHttpError<E>> {
        if let Some(s) = &self.sign_in
            && let Some(refusal) = refusal(&result)
        {
            super::note_refusal(&s.server, &s.url, &refusal, &s.secrets).await;
            *s.watch.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(refusal);
        }
        result
    }
}

/// `headers` with the message's trace context as `traceparent`, when it carries one.
fn traced(
    message: &ClientJsonRpcMessage,
    mut headers: HashMap<HeaderName, HeaderValue>,
) -> HashMap<HeaderName, HeaderValue> {
    if let Some(value) = crate::traces::traceparent_of(message)
        && let Ok(value) = HeaderValue::from_str(value)
    {
        headers.insert(HeaderName::from_static("traceparent"), value);
    }
    headers
}

/// The refusal a request's outcome is, if it is one.
fn refusal<T, E: std::error::Error + Send + Sync + 'static>(
    result: &Result<T, StreamableHttpError<E>>,
) -> Option<Refusal> {
    match result {
        Err(StreamableHttpError::AuthRequired(e)) => Some(Refusal::SignInRequired {
            challenge: e.www_authenticate_header.clone(),
        }),
        Err(StreamableHttpError::InsufficientScope(e)) => Some(Refusal::InsufficientScope {
            scope: e.required_scope.clone(),
            challenge: e.www_authenticate_header.clone(),
        }),
        _ => None,
    }
}

type Failed<E> = StreamableHttpError<E>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Watched<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failed<Self::Error>> {
        let headers = traced(&message, custom_headers);
        self.noting(
            self.inner
                .post_message(uri, message, session_id, auth_header, headers)
                .await,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failed<Self::Error>> {
        let headers = traced(&message, custom_headers);
        self.noting(
            self.inner
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    headers,
                    max_sse_event_size,
                )
                .await,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failed<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failed<Self::Error>> {
        self.noting(
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
                .await,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failed<Self::Error>> {
        self.noting(
            self.inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
        )
        .await
    }
}
