//! A remote server's sign-in as its supervisor sees it: waiting for one (`sign_in_required`,
//! tried again only once the keychain entry changed, so listings and reloads do not hammer the
//! server), and a sign-in refused mid-session.

use super::ServerState;
use super::UpstreamError;
use super::supervisor::{Connection, Upstream};
use crate::ErrorCode;

impl Upstream {
    /// Failed for want of a sign-in (not crashed, not another failure).
    pub(super) fn waits_for_sign_in(&self, now: &super::lifecycle::Snapshot) -> bool {
        self.signs_in
            && now.state == ServerState::Error
            && !now.crashed
            && self
                .life
                .with_health(|h| h.last_code == Some(ErrorCode::AuthRequired))
    }

    /// While the server waits for a sign-in, answers `auth_required` at once unless the
    /// keychain entry changed since the last try (a sign-in, maybe from another process).
    pub(super) async fn sign_in_gate(&self) -> Result<(), UpstreamError> {
        if self.waits_for_sign_in(&self.life.snapshot(Connection::is_closed))
            && let Ok(crate::config::Transport::Http { url, .. }) = self.entry.transport(&self.name)
            && let Ok(url) = crate::config::interpolate(&url, self.ctx.secrets.as_ref())
        {
            let now = crate::oauth::fingerprint(&self.name, &url, &self.ctx.secrets).await;
            let unchanged = {
                let mut tried = self.sign_in_tried.lock().unwrap_or_else(|p| p.into_inner());
                tried.replace(now) == Some(now)
            };
            if unchanged {
                return Err(UpstreamError::Unavailable {
                    name: self.name.clone(),
                    message: self
                        .last_error()
                        .unwrap_or_else(|| super::http_error::SIGN_IN_REQUIRED.to_owned()),
                    code: ErrorCode::AuthRequired,
                });
            }
        }
        Ok(())
    }

    /// The server refused the connection's sign-in mid-session (revoked, expired beyond
    /// refresh, or short of a scope): the call answers `auth_required` saying what to do, and
    /// the server waits for a new sign-in (`sign_in_required`).
    pub(super) fn refused(&self, refusal: crate::oauth::watch::Refusal) -> UpstreamError {
        use crate::oauth::watch::Refusal;
        let message = match &refusal {
            Refusal::SignInRequired { .. } => super::http_error::SIGN_IN_REQUIRED.to_owned(),
            Refusal::InsufficientScope { scope, .. } => {
                super::http_error::needs_scope(scope.as_deref())
            }
        };
        drop(self.life.refused(message.clone(), ErrorCode::AuthRequired));
        UpstreamError::Unavailable {
            name: self.name.clone(),
            message,
            code: ErrorCode::AuthRequired,
        }
    }
}
