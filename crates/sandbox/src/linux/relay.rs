//! The relay inside a server's network namespace: a child of the launcher that accepts TCP on
//! the proxy's port (loopback, inside the namespace) and carries each connection to the proxy's
//! unix socket outside it — unix sockets are named in the file system, which the namespace
//! does not separate. Forked before Landlock and seccomp apply, it is the server's only way out,
//! and leads to the proxy alone. It dies with the server (a parent-death signal; the server's
//! process group is killed with it too).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Forks the relay; returns in the launcher, which goes on to exec the server.
#[allow(unsafe_code)]
pub fn start(listener: TcpListener, socket: &Path) -> std::io::Result<()> {
    let socket = socket.to_owned();
    let launcher = nix::unistd::getpid();
    // SAFETY: the launcher is single-threaded: the child may allocate and start threads.
    match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Parent { .. } => Ok(()),
        nix::unistd::ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
            if nix::unistd::getppid() != launcher {
                std::process::exit(0);
            }
            // Not the server's pipes: Offload must see them close when the server ends.
            if let Ok(null) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
            {
                let _ = nix::unistd::dup2_stdin(&null);
                let _ = nix::unistd::dup2_stdout(&null);
                let _ = nix::unistd::dup2_stderr(&null);
            }
            serve(&listener, &socket);
            std::process::exit(0);
        }
    }
}

fn serve(listener: &TcpListener, socket: &Path) {
    for tcp in listener.incoming().flatten() {
        let socket: PathBuf = socket.to_owned();
        std::thread::spawn(move || {
            if let Ok(unix) = UnixStream::connect(&socket) {
                carry(tcp, unix);
            }
        });
    }
}

/// Copies both ways until each side is done.
fn carry(tcp: TcpStream, unix: UnixStream) {
    let (Ok(tcp_back), Ok(unix_back)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || pipe(tcp, unix, |u| u.shutdown(Shutdown::Write)));
    pipe(unix_back, tcp_back, |t| t.shutdown(Shutdown::Write));
    let _ = up.join();
}

fn pipe<R: Read, W: Write>(mut from: R, mut to: W, done: impl FnOnce(&W) -> std::io::Result<()>) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = done(&to);
}
