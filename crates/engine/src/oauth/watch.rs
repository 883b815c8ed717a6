//! Noticing, on a live connection, that the server refused its sign-in. rmcp's HTTP worker ends
//! the connection when a request is refused, and the caller then only sees "closed"; this
//! wrapper around the HTTP client remembers why, so the call answers `auth_required` in words,
//! the server shows `sign_in_required`, and a refusal for want of a scope is kept for the next
//! sign-in (step-up).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// Why the server refused the connection's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no token, or one it no longer accepts (and no refresh helped).
    SignInRequired,
    /// 403 `insufficient_scope`, with the scope it wants when it said.
    InsufficientScope(Option<String>),
}

/// Shared between a connection's HTTP client and its supervisor.
#[derive(Default)]
pub struct AuthWatch(Mutex<Option<Refusal>>);

impl AuthWatch {
    /// The refusal seen since the last call, if any (taken).
    pub fn take(&self) -> Option<Refusal> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn note<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        result: &Result<T, StreamableHttpError<E>>,
    ) {
        let refusal = match result {
            Err(StreamableHttpError::AuthRequired(_)) => Refusal::SignInRequired,
            Err(StreamableHttpError::InsufficientScope(e)) => {
                Refusal::InsufficientScope(e.required_scope.clone())
            }
            _ => return,
        };
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(refusal);
    }
}

/// An HTTP client that tells an [`AuthWatch`] about refusals.
#[derive(Clone)]
pub struct Watched<C> {
    pub inner: C,
    pub watch: Arc<AuthWatch>,
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
        let result = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.watch.note(&result);
        result
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
        let result = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.watch.note(&result);
        result
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
        let result = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.watch.note(&result);
        result
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
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.watch.note(&result);
        result
    }
}
