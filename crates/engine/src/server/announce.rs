//! What a client is told without asking: `list_changed` for tools, prompts and resources, and
//! `resources/updated` for the resources it subscribed to. A client before 2026-07-28 hears it
//! on its session; one on 2026-07-28 on the `subscriptions/listen` streams it opens (each with
//! the filter it asked for).

use std::sync::Arc;

use rmcp::model::{ResourceUpdatedNotificationParam, ServerCapabilities};
use rmcp::service::{SubscriptionSendError, SubscriptionSink};
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::session::Subscriptions;
use super::{OffloadServer, direct, upstream_resources};
use crate::upstream::{Notice, Pool};

/// Where announcements go.
#[derive(Clone)]
pub enum To {
    /// A client session (protocol revisions before 2026-07-28).
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream (2026-07-28): what its filter did not ask for is not sent.
    Stream(SubscriptionSink),
}

/// The listener is gone: stop.
struct Gone;

impl To {
    async fn tools_changed(&self) -> Result<(), Gone> {
        match self {
            Self::Session(peer) => session(peer.notify_tool_list_changed().await),
            Self::Stream(sink) => stream(sink.notify_tool_list_changed().await),
        }
    }

    async fn prompts_changed(&self) -> Result<(), Gone> {
        match self {
            Self::Session(peer) => session(peer.notify_prompt_list_changed().await),
            Self::Stream(sink) => stream(sink.notify_prompt_list_changed().await),
        }
    }

    async fn resources_changed(&self) -> Result<(), Gone> {
        match self {
            Self::Session(peer) => session(peer.notify_resource_list_changed().await),
            Self::Stream(sink) => stream(sink.notify_resource_list_changed().await),
        }
    }

    async fn resource_updated(&self, uri: String) -> Result<(), Gone> {
        match self {
            Self::Session(peer) => session(
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await,
            ),
            Self::Stream(sink) => stream(sink.notify_resource_updated(uri).await),
        }
    }

    fn closed(&self) -> bool {
        match self {
            Self::Session(peer) => peer.is_transport_closed(),
            Self::Stream(_) => false, // a closed stream fails its next send
        }
    }
}

fn session(sent: Result<(), rmcp::ServiceError>) -> Result<(), Gone> {
    sent.map_err(|e| {
        tracing::debug!("notification not sent (client gone?): {e}");
        Gone
    })
}

fn stream(sent: Result<(), SubscriptionSendError>) -> Result<(), Gone> {
    match sent {
        Ok(()) => Ok(()),
        // Not in this stream's filter: nothing to send, the stream goes on.
        Err(
            SubscriptionSendError::NotificationNotAccepted(_)
            | SubscriptionSendError::UnsupportedNotification(_),
        ) => Ok(()),
        Err(e) => {
            tracing::debug!("notification not sent (stream closed?): {e}");
            Err(Gone)
        }
    }
}

/// One `subscriptions/listen` stream (2026-07-28): list changes and updates of the resources it
/// names (upstream ones subscribed upstream while it listens), until the client ends it.
pub async fn listen(
    server: OffloadServer,
    context: rmcp::service::SubscriptionContext,
) -> Result<(), rmcp::ErrorData> {
    let subscriptions: Subscriptions = Arc::default();
    let wanted = context
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    for uri in wanted {
        if server.owns(&uri).await? {
            continue; // a stored response never changes
        }
        match upstream_resources::subscribe(&server.engine.pool, &server.engine.routes, &uri).await
        {
            Ok(route) => {
                subscriptions
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(uri, route);
            }
            Err(e) => tracing::debug!("no updates for {uri}: {}", e.message),
        }
    }
    let to = To::Stream(context.sink().clone());
    let tasks = start(server.clone(), to, subscriptions.clone());
    context.cancelled().await;
    for task in tasks {
        task.abort();
    }
    let routes: Vec<_> = subscriptions
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .drain()
        .map(|(_, route)| route)
        .collect();
    for route in routes {
        let _ = upstream_resources::unsubscribe(&server.engine.pool, &server.engine.routes, &route)
            .await;
    }
    Ok(())
}

/// Starts telling `to` about changes until it is gone (or the tasks are aborted).
pub fn start(server: OffloadServer, to: To, subscriptions: Subscriptions) -> [JoinHandle<()>; 3] {
    [
        tokio::spawn(tools(server.clone(), to.clone())),
        tokio::spawn(notices(server.clone(), to.clone(), subscriptions)),
        tokio::spawn(stored(server, to)),
    ]
}

/// `tools/list_changed` whenever what this client lists changes: a server started or stopped,
/// an upstream's tools changed, the configuration changed, a tool was approved.
async fn tools(server: OffloadServer, to: To) {
    let engine = server.engine.clone();
    let mut pool = engine.pool.watch();
    let mut config = engine.watch();
    let mut shown: Option<Vec<String>> = None;
    loop {
        let exposure = server.exposure().await;
        let names: Vec<String> = direct::listing(&server.tools, &exposure, &engine)
            .iter()
            .map(|t| format!("{}\u{0}{}", t.name, t.description.as_deref().unwrap_or("")))
            .collect();
        if shown.as_ref().is_some_and(|s| *s != names) && to.tools_changed().await.is_err() {
            return;
        }
        shown = Some(names);
        tokio::select! {
            changed = pool.changed() => if changed.is_err() { return },
            changed = config.changed() => if changed.is_err() { return },
            () = tokio::time::sleep(std::time::Duration::from_secs(30)) => {}
        }
        if to.closed() {
            return;
        }
        // A burst of changes (servers starting together) is one notification.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        pool.borrow_and_update();
        config.borrow_and_update();
    }
}

/// The enabled servers, and which running ones offer prompts and resources: a change is a list
/// change (a server added or removed, one that offers them started or stopped).
fn offering(pool: &Pool) -> (Vec<String>, Vec<String>) {
    let servers = pool.servers();
    let enabled: Vec<String> = servers
        .iter()
        .filter(|s| !s.entry().disabled)
        .map(|s| s.name().to_owned())
        .collect();
    let offer = |what: fn(&ServerCapabilities) -> bool| {
        let running = servers
            .iter()
            .filter(|s| s.capabilities().is_some_and(|c| what(&c)))
            .map(|s| s.name().to_owned());
        enabled.iter().cloned().chain(running).collect::<Vec<_>>()
    };
    (
        offer(|c| c.prompts.is_some()),
        offer(|c| c.resources.is_some()),
    )
}

/// What upstreams announce about their prompts and resources (list changes, also when a server
/// that offers them starts or stops), and updates of the resources subscribed to, under the
/// URI the client used.
async fn notices(server: OffloadServer, to: To, subscriptions: Subscriptions) {
    let engine = server.engine.clone();
    let mut notices = engine.pool.notices();
    let mut pool = engine.pool.watch();
    let mut shown = offering(&engine.pool);
    loop {
        let (prompts, resources) = tokio::select! {
            notice = notices.recv() => match notice {
                Ok(Notice::PromptsChanged { .. }) => (true, false),
                Ok(Notice::ResourcesChanged { .. }) => (false, true),
                Ok(Notice::ResourceUpdated { server, uri }) => {
                    let asked = subscriptions
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .iter()
                        .find(|(_, r)| r.server == server && r.inner == uri)
                        .map(|(asked, _)| asked.clone());
                    if let Some(asked) = asked
                        && to.resource_updated(asked).await.is_err()
                    {
                        return;
                    }
                    (false, false)
                }
                Err(RecvError::Lagged(_)) => (true, true),
                Err(RecvError::Closed) => return,
            },
            changed = pool.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = offering(&engine.pool);
                let changed = (now.0 != shown.0, now.1 != shown.1);
                shown = now;
                changed
            }
        };
        if prompts && to.prompts_changed().await.is_err() {
            return;
        }
        if resources && to.resources_changed().await.is_err() {
            return;
        }
        if to.closed() {
            return;
        }
    }
}

/// `resources/list_changed` when a response is stored (by any client of this engine).
async fn stored(server: OffloadServer, to: To) {
    let mut added = server.engine.store.subscribe();
    // A lagging receiver still means "something was added": notify once and go on.
    while let Ok(_) | Err(RecvError::Lagged(_)) = added.recv().await {
        if to.resources_changed().await.is_err() {
            return;
        }
    }
}
