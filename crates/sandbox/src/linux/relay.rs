//! The relay inside a server's network namespace: a child of the launcher that accepts TCP on
//! the proxy's port (loopback, inside the namespace) and carries each connection to the proxy's
//! unix socket outside it — unix sockets are named in the file system, which the namespace
//! does not separate. Forked before Landlock and seccomp apply, it is the server's only way out,
//! and leads to the proxy alone. It ends with the server: it watches the server's process (a
//! pidfd) and its own parent. A parent-death signal alone does not do: the server dies inside
//! its Landlock domain, whose signal scope keeps that signal from the relay outside it (the
//! server's process group is killed too, but a server that left its group would leave the relay).

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
            super::let_go_of_stdio();
            serve(&listener, &socket, launcher);
            std::process::exit(0);
        }
    }
}

/// Accepts until the server's process ends (the launcher's pid, which the exec kept).
fn serve(listener: &TcpListener, socket: &Path, server: nix::unistd::Pid) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let ended = process_fd(server);
    loop {
        // Without a pidfd (kernels before 5.3), a look at the parent once a second.
        if nix::unistd::getppid() != server {
            return;
        }
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        if let Some(fd) = &ended {
            fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return,
        }
        if fds
            .get(1)
            .and_then(PollFd::revents)
            .is_some_and(|r| !r.is_empty())
        {
            return;
        }
        if let Ok((tcp, _)) = listener.accept() {
            let socket: PathBuf = socket.to_owned();
            std::thread::spawn(move || {
                if let Ok(unix) = UnixStream::connect(&socket) {
                    carry(tcp, unix);
                }
            });
        }
    }
}

/// A descriptor that turns readable when `pid`'s process ends (`pidfd_open`, Linux 5.3).
#[allow(unsafe_code)]
fn process_fd(pid: nix::unistd::Pid) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid.as_raw(), 0) };
    let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: a descriptor the kernel just made for this process, owned here alone.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
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
