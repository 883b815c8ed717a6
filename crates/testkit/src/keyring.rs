//! A real Secret Service for tests: a private D-Bus session bus and gnome-keyring's secrets
//! component on it, unlocked, keeping its keyrings under the test context's home. Offload
//! processes given [`SecretService::apply`] use it as the OS keychain, exactly as on a desktop.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::TestContext;

pub struct SecretService {
    bus: Child,
    keyring: Child,
    address: String,
}

impl SecretService {
    /// Starts the bus and the keyring (Debian's `dbus-daemon` and `gnome-keyring`).
    pub async fn start(ctx: &TestContext) -> Self {
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("dbus-daemon (apt install dbus-daemon)");
        let mut lines = BufReader::new(bus.stdout.take().expect("stdout")).lines();
        let address = lines
            .next_line()
            .await
            .expect("read the bus address")
            .expect("dbus-daemon printed its address");

        let mut cmd = Command::new("gnome-keyring-daemon");
        cmd.args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        ctx.isolate(&mut cmd);
        let mut keyring = cmd
            .spawn()
            .expect("gnome-keyring-daemon (apt install gnome-keyring)");
        {
            use tokio::io::AsyncWriteExt;
            let mut stdin = keyring.stdin.take().expect("stdin");
            // A non-empty password: an empty one leaves the login collection locked.
            stdin.write_all(b"offload-tests").await.expect("password");
        }
        // It prints its environment once it serves the bus.
        let mut out = BufReader::new(keyring.stdout.take().expect("stdout")).lines();
        while let Ok(Some(line)) = out.next_line().await {
            if line.starts_with("GNOME_KEYRING_CONTROL") || line.starts_with("SSH_AUTH_SOCK") {
                break;
            }
        }
        tokio::spawn(async move { while let Ok(Some(_)) = out.next_line().await {} });
        Self {
            bus,
            keyring,
            address,
        }
    }

    /// Points a command at this Secret Service.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &self.address);
    }

    /// `apply` for a `std::process::Command`.
    pub fn apply_std(&self, cmd: &mut std::process::Command) {
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &self.address);
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        let _ = self.keyring.start_kill();
        let _ = self.bus.start_kill();
    }
}
