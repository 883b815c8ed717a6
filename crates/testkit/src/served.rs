//! A folder served over HTTP for the tests of fetchers.

use std::path::Path;

/// A folder served over HTTP on 127.0.0.1 (Python's `http.server`) while it lives: a web page
/// for fetchers.
pub struct ServedDir(std::process::Child);

impl ServedDir {
    pub fn start(dir: &Path, port: u16) -> ServedDir {
        let served = ServedDir(
            std::process::Command::new("python3")
                .args([
                    "-m",
                    "http.server",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                ])
                .arg("--directory")
                .arg(dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("python3 runs"),
        );
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return served;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("python3's http.server did not start on port {port}");
    }
}

impl Drop for ServedDir {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
