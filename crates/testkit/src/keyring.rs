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
    /// Starts the bus and the keyring (Debian's `dbus-daemon` and `gnome-keyring`), and waits
    /// until the keyring owns its name on the bus. The bus starts no service by itself: with the
    /// session bus's usual configuration, a keychain write that came before the keyring owned
    /// its name made D-Bus start a second, locked gnome-keyring from the system's service
    /// files, and writes then failed ("prompt dismissed") when the machine was busy.
    pub async fn start(ctx: &TestContext) -> Self {
        let config = ctx.tmp.path().join("dbus-session.conf");
        std::fs::write(&config, BUS_CONFIG).expect("write the bus configuration");
        let mut bus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1"])
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
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !owned(&address).await {
            assert!(
                std::time::Instant::now() < deadline,
                "gnome-keyring did not take org.freedesktop.secrets on the bus within 20 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
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

/// A session bus that starts no service on demand (no service directories).
const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

/// Whether the Secret Service's name has an owner on the bus at `address` (asked with
/// `dbus-send`, which `dbus-daemon` depends on; asking does not start anything).
async fn owned(address: &str) -> bool {
    Command::new("dbus-send")
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            "string:org.freedesktop.secrets",
        ])
        .output()
        .await
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
}

impl Drop for SecretService {
    fn drop(&mut self) {
        let _ = self.keyring.start_kill();
        let _ = self.bus.start_kill();
    }
}
