use super::*;
use crate::upstream::refusals::Refusal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn allow(entries: &[&str]) -> Allow {
    Allow::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn an_allow_list_names_hosts_domains_below_and_ports() {
    let list = allow(&[
        "api.github.com",
        "*.example.org",
        "localhost:8080",
        "[::1]:9000",
    ]);
    assert!(list.permits("api.github.com", 443));
    assert!(
        list.permits("API.GitHub.com.", 80),
        "case and a trailing dot"
    );
    assert!(
        !list.permits("api.github.com", 22),
        "a bare host is HTTPS and HTTP"
    );
    assert!(!list.permits("evil-api.github.com", 443));
    assert!(list.permits("a.b.example.org", 443));
    assert!(
        !list.permits("example.org", 443),
        "*.domain is below it, not itself"
    );
    assert!(!list.permits("example.org.evil.com", 443));
    assert!(list.permits("localhost", 8080));
    assert!(!list.permits("localhost", 443));
    assert!(
        !list.permits("127.0.0.1", 8080),
        "a name is not its address"
    );
    assert!(list.permits("::1", 9000));
    for wrong in ["host:http", "", "*.", "a b", "host:99999"] {
        let e = Allow::parse(&[wrong.to_owned()]).unwrap_err();
        assert!(e.contains("network.allow"), "{wrong}: {e}");
    }
    assert!(Allow::registries().permits("registry.npmjs.org", 443));
    assert!(!Allow::registries().permits("api.github.com", 443));
}

/// A web server on loopback that answers every request with `hello`.
async fn origin() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap_or(0) == 1
                {
                    head.push(byte[0]);
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    )
                    .await;
            });
        }
    });
    port
}

/// Sends `request` to the proxy and reads until the peer closes (or 2 s).
async fn ask<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    request: &str,
    then: Option<&str>,
) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = vec![0u8; 4096];
    let mut text = String::new();
    if let Some(then) = then {
        let n = stream.read(&mut got).await.unwrap();
        text.push_str(&String::from_utf8_lossy(&got[..n]));
        stream.write_all(then.as_bytes()).await.unwrap();
    }
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut rest)).await;
    text + &String::from_utf8_lossy(&rest)
}

#[tokio::test]
async fn the_proxy_reaches_allowed_hosts_over_tcp_and_its_socket_and_refuses_and_logs_the_rest() {
    let port = origin().await;
    let witness = Witness::default();
    let logs = witness.logs.clone();
    let egress = start(
        "fx",
        allow(&[&format!("localhost:{port}")]),
        witness.clone(),
    )
    .await
    .unwrap();
    let tcp = || tokio::net::TcpStream::connect(("127.0.0.1", egress.port));
    let get = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

    // HTTPS's way: a tunnel, then whatever the client speaks in it.
    let tunnel = ask(
        tcp().await.unwrap(),
        &format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"),
        Some(get),
    )
    .await;
    assert!(tunnel.starts_with("HTTP/1.1 200"), "{tunnel}");
    assert!(tunnel.ends_with("hello"), "{tunnel}");
    // Plain HTTP: an absolute URL, forwarded.
    let plain = ask(
        tcp().await.unwrap(),
        &format!("GET http://localhost:{port}/x HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
        None,
    )
    .await;
    assert!(
        plain.starts_with("HTTP/1.1 200") && plain.ends_with("hello"),
        "{plain}"
    );
    // The same through the unix socket the relay in a network namespace uses.
    let unix = ask(
        tokio::net::UnixStream::connect(&egress.socket)
            .await
            .unwrap(),
        &format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n"),
        Some(get),
    )
    .await;
    assert!(unix.ends_with("hello"), "{unix}");

    // Not on the list: the same server by its address, and another port.
    for target in [format!("127.0.0.1:{port}"), "localhost:1".to_owned()] {
        let refused = ask(
            tcp().await.unwrap(),
            &format!("CONNECT {target} HTTP/1.1\r\nConnection: close\r\n\r\n"),
            None,
        )
        .await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(
            refused.contains("not in this server's allow-list"),
            "{refused}"
        );
    }
    let logged = logs.lines();
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[0].level, "warning");
    assert!(
        logged[0]
            .message
            .starts_with(&format!("network: refused 127.0.0.1:{port}")),
        "{logged:?}"
    );
    assert!(logged[0].message.contains("add \"127.0.0.1\""));
    // Kept for the app, which offers to allow each.
    assert_eq!(
        witness.refusals.hosts(),
        [
            Refusal {
                host: "127.0.0.1".into(),
                port,
                times: 1
            },
            Refusal {
                host: "localhost".into(),
                port: 1,
                times: 1
            },
        ]
    );

    // Stopped with its server: the port and the socket are gone.
    let socket = egress.socket.clone();
    let stopped = egress.port;
    drop(egress);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!socket.exists());
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", stopped))
            .await
            .is_err()
    );
}
