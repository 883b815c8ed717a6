//! The app's operations on a real engine: a real config file, the fixture server as upstream,
//! the real file watcher.

mod confinement;
mod overview;
mod reload;
mod responses;
mod retention;
mod roots;
mod secrets;
mod servers;
mod sharing;

use std::sync::Arc;
use std::time::Duration;

use offload_testkit::{TestContext, target_bin};
use serde_json::{Value, json};

use super::*;
use crate::config::{NoKeychain, SecretSource};
use crate::events::{Event, EventKind};
use crate::keychain::Keychain;
use crate::upstream::ServerState;
use crate::{Engine, EngineOptions, ErrorCode};

fn engine(t: &TestContext) -> Arc<Engine> {
    engine_with(t, Arc::new(NoKeychain))
}

fn engine_with(t: &TestContext, secrets: Arc<dyn SecretSource>) -> Arc<Engine> {
    let options = EngineOptions::under(&t.home, t.config_path.clone(), secrets);
    Arc::new(Engine::load(options).expect("engine").0)
}

/// A keychain over keyring-core's in-memory mock store: the real Secret Service is exercised by
/// the app's E2E run, which starts one; unit tests have no session bus.
fn mock_keychain() -> Arc<Keychain> {
    Arc::new(Keychain::with_store(
        keyring_core::mock::Store::new().unwrap(),
    ))
}

async fn env_of(engine: &Engine, server: &str, name: &str) -> Value {
    let args = json!({"name": name}).as_object().cloned();
    let r = engine.pool.get(server).unwrap();
    let r = r.call("env", args, Default::default()).await.unwrap();
    r.structured_content.unwrap()["value"].clone()
}

fn fixture() -> ServerSpec {
    ServerSpec {
        transport: "stdio".into(),
        command: target_bin("offload-fixture").display().to_string(),
        enabled: true,
        ..ServerSpec::default()
    }
}

fn file(t: &TestContext) -> Value {
    serde_json::from_slice(&std::fs::read(&t.config_path).unwrap()).unwrap()
}

fn names(engine: &Engine) -> Vec<String> {
    servers(engine).into_iter().map(|s| s.name).collect()
}
