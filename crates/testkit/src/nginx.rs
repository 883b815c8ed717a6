//! nginx (Debian's package, installed by `scripts/setup-interop.sh`) in front of several
//! `offload serve --http` replicas, round-robin, as a team would run it: for the team tests and
//! the team bench. One process (`master_process off`), its files in a directory of its own.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running nginx, stopped when dropped.
pub struct Nginx {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    /// Round-robin over `backends` (`host:port`); a backend that refuses connections is left
    /// out for 10 s and the request goes to the next (a request already sent is not sent again).
    pub fn start(dir: &Path, backends: &[String]) -> Self {
        let port = crate::free_port();
        for sub in ["body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            std::fs::create_dir_all(dir.join(sub)).expect("nginx directories");
        }
        let servers: String = backends
            .iter()
            .map(|b| format!("    server {b} max_fails=1 fail_timeout=10s;\n"))
            .collect();
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             upstream offload {{\n{servers}    keepalive 64;\n  }}\n  \
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://offload;\n      \
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      \
             proxy_buffering off;\n      proxy_read_timeout 60s;\n    }}\n  }}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).expect("nginx.conf");
        let child = Command::new("nginx")
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-p")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx (Debian's nginx package; scripts/setup-interop.sh installs it)");
        let nginx = Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return nginx;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!(
            "nginx did not listen: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
    }
}

/// `host:port` of an `http://host:port/mcp` URL.
pub fn backend(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}
