//! What one session was shown of the upstream tools, so that nothing changes under its client:
//! the mode `auto` settled on at its first look (kept until the configuration changes, then
//! decided again and announced with `list_changed`), and every upstream tool listed to it by
//! name, which stays callable for the session while its server offers it — also after the
//! server's list changed the names around it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::gateway::{Expose, Exposed, Mode};

#[derive(Default)]
struct Inner {
    /// The mode and the configuration's change count it was settled under.
    settled: Option<(u64, Mode)>,
    listed: HashMap<String, Exposed>,
}

#[derive(Clone, Default)]
pub(crate) struct Shown(Arc<Mutex<Inner>>);

impl Shown {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The mode to show under the configuration's change count `config`: the one settled
    /// earlier in this session, if the configuration has not changed since.
    pub fn mode(&self, config: u64) -> Option<Expose> {
        match self.inner().settled {
            Some((at, Mode::Direct)) if at == config => Some(Expose::Direct),
            Some((at, Mode::Meta)) if at == config => Some(Expose::Meta),
            _ => None,
        }
    }

    /// Settles the session on `mode` under the configuration's change count `config` (the
    /// first settling under a count wins).
    pub fn settle(&self, config: u64, mode: Mode) {
        let mut inner = self.inner();
        if inner.settled.is_none_or(|(at, _)| at != config) {
            inner.settled = Some((config, mode));
        }
    }

    /// Notes the upstream tools a listing showed the client.
    pub fn listed<'a>(&self, tools: impl IntoIterator<Item = &'a Exposed>) {
        let mut inner = self.inner();
        for e in tools {
            inner.listed.insert(e.name.clone(), e.clone());
        }
    }

    /// The upstream tool listed to this session under `name`, if any was.
    pub fn find(&self, name: &str) -> Option<Exposed> {
        self.inner().listed.get(name).cloned()
    }
}
