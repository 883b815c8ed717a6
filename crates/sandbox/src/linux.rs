//! The Linux launcher: `no_new_privs`, rlimits, Landlock (the best ABI the kernel has), then a
//! seccomp filter, in that order (the filter would refuse the Landlock calls otherwise).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, NetPort,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::{Confined, Limits, Network, Policy, SandboxError, Support};

mod mounts;
mod processes;
mod relay;

/// The newest ABI this launcher asks for; the kernel's best is used up to it.
const ABI_WANTED: ABI = ABI::V6;

pub fn support() -> Support {
    // Restricting a short-lived thread is the only way to read the kernel's ABI without
    // touching this process: the thread's restrictions end with it.
    let abi = std::thread::spawn(|| {
        Ruleset::default()
            .handle_access(AccessFs::Execute)
            .and_then(|r| r.create())
            .and_then(|r| r.restrict_self())
            .map(|status| match status.landlock {
                LandlockStatus::Available {
                    effective_abi,
                    kernel_abi,
                } => kernel_abi.map_or(effective_abi as u32, |k| k as u32),
                _ => 0,
            })
            .unwrap_or(0)
    })
    .join()
    .unwrap_or(0);
    let root = crate::runs_as_root();
    let user_namespaces = !root && user_namespace_works();
    Support {
        landlock_abi: abi,
        tcp_ports: abi >= 4,
        scoping: abi >= 6,
        process_limits: !root && user_namespaces,
        namespaces: root || user_namespaces,
    }
}

pub fn physical_memory() -> Option<u64> {
    use nix::unistd::{SysconfVar, sysconf};
    let pages = sysconf(SysconfVar::_PHYS_PAGES).ok()??;
    let size = sysconf(SysconfVar::PAGE_SIZE).ok()??;
    u64::try_from(pages)
        .ok()?
        .checked_mul(u64::try_from(size).ok()?)
}

pub fn confine(policy: &Policy) -> Result<Confined, SandboxError> {
    let os = |what| {
        move |e: nix::Error| SandboxError::Os {
            what,
            source: e.into(),
        }
    };
    nix::sys::prctl::set_no_new_privs().map_err(os("cannot set no_new_privs"))?;
    // No core dumps: a crash must not write the server's memory (tokens, files) to disk.
    nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0)
        .map_err(os("cannot limit core dumps"))?;
    close_inherited_descriptors()?;
    let mut user_namespace = false;
    let processes_limited = limit(&policy.limits, &mut user_namespace)?;
    let network_namespace = match &policy.network {
        Network::Proxy { port, socket } => isolate(*port, socket, &mut user_namespace)?,
        _ => false,
    };
    let mut mount_namespace = false;
    let private = mounts::private_folders(policy, &mut mount_namespace, &mut user_namespace)?;
    let read_only_held =
        mounts::keep_read_only(&policy.read_only, &mut mount_namespace, &mut user_namespace)?;
    let process_namespace = !policy.no_new_processes
        && mounts::own_mount_namespace(&mut mount_namespace, &mut user_namespace)?
        && processes::enter()?;
    // Its own `/proc`, where a process namespace shows its processes alone; else only the
    // launcher's own entry, which becomes the server's (the policy's `/proc/self`).
    let own_proc = if process_namespace {
        vec![PathBuf::from("/proc")]
    } else {
        Vec::new()
    };
    let confined = landlock(policy, &private, &own_proc, network_namespace)?;
    seccomp(policy)?;
    Ok(Confined {
        processes_limited,
        network_namespace,
        read_only_held,
        private_folders_held: !private.is_empty(),
        process_namespace,
        ..confined
    })
}

/// Points this process's standard streams at `/dev/null`: a helper process (the relay, the
/// launcher waiting for its server) must not hold the server's pipes, which Offload must see
/// close when the server ends.
fn let_go_of_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// Enters a user namespace of this process's own unless it is in one already; whether it is.
fn own_user_namespace(entered: &mut bool) -> Result<bool, SandboxError> {
    if !*entered {
        match Maps::of_this_process().enter() {
            Entered::Yes => *entered = true,
            // Blocked here (some distributions do): nothing changed.
            Entered::No => {}
            // Mapping one's own user needs no privilege: this is not expected, but a server in
            // a namespace where it is nobody must not start.
            Entered::Unmapped => {
                return Err(SandboxError::Os {
                    what: "cannot map the user in a user namespace",
                    source: std::io::Error::last_os_error(),
                });
            }
        }
    }
    Ok(*entered)
}

/// Applies the limits; whether the process limit holds.
fn limit(limits: &Limits, user_namespace: &mut bool) -> Result<bool, SandboxError> {
    use nix::sys::resource::{Resource, setrlimit};
    if let Some(bytes) = limits.memory {
        setrlimit(Resource::RLIMIT_DATA, bytes, bytes).map_err(|e| SandboxError::Os {
            what: "cannot limit memory",
            source: e.into(),
        })?;
    }
    let Some(processes) = limits.processes else {
        return Ok(false);
    };
    // RLIMIT_NPROC counts every process of the user: set as is, a server would be refused a
    // fork whenever the user's desktop runs more than the limit. In a user namespace of its
    // own, it counts the server's processes alone. Root is never held by it.
    if crate::runs_as_root() || !own_user_namespace(user_namespace)? {
        return Ok(false);
    }
    setrlimit(Resource::RLIMIT_NPROC, processes, processes).map_err(|e| SandboxError::Os {
        what: "cannot limit processes",
        source: e.into(),
    })?;
    Ok(true)
}

/// The maps that make a new user namespace's user and group the same as outside (so files,
/// owners and permissions look and work the same), written before any fork so the child of a
/// threaded process allocates nothing.
struct Maps {
    uid: String,
    gid: String,
}

impl Maps {
    fn of_this_process() -> Maps {
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        Maps {
            uid: format!("{uid} {uid} 1"),
            gid: format!("{gid} {gid} 1"),
        }
    }

    /// Makes this process the only member of a new user namespace, mapped. System calls only.
    #[allow(unsafe_code)]
    fn enter(&self) -> Entered {
        fn write(path: &std::ffi::CStr, data: &[u8]) -> bool {
            // SAFETY: plain system calls on a NUL-terminated path and a live buffer.
            unsafe {
                let fd = nix::libc::open(path.as_ptr(), nix::libc::O_WRONLY | nix::libc::O_CLOEXEC);
                if fd < 0 {
                    return false;
                }
                let n = nix::libc::write(fd, data.as_ptr().cast(), data.len());
                nix::libc::close(fd);
                usize::try_from(n) == Ok(data.len())
            }
        }
        // SAFETY: unshare takes flags only.
        if unsafe { nix::libc::unshare(nix::libc::CLONE_NEWUSER) } != 0 {
            return Entered::No;
        }
        if write(c"/proc/self/setgroups", b"deny")
            && write(c"/proc/self/uid_map", self.uid.as_bytes())
            && write(c"/proc/self/gid_map", self.gid.as_bytes())
        {
            Entered::Yes
        } else {
            Entered::Unmapped
        }
    }
}

/// How entering a user namespace went.
#[derive(PartialEq)]
enum Entered {
    Yes,
    /// Refused: this process is as it was.
    No,
    /// Entered, but its user is not mapped in it.
    Unmapped,
}

/// Whether a user namespace can be entered and mapped here (blocked by some distributions, as
/// Ubuntu 24.04's AppArmor does): tried in a child, since a half-made one cannot be left.
#[allow(unsafe_code)]
fn user_namespace_works() -> bool {
    let maps = Maps::of_this_process();
    // SAFETY: the child makes system calls only (no allocation, no lock) and exits.
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {
            let code = if maps.enter() == Entered::Yes { 0 } else { 1 };
            // SAFETY: leaves the child without running the parent's exit handlers.
            unsafe { nix::libc::_exit(code) }
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => matches!(
            nix::sys::wait::waitpid(child, None),
            Ok(nix::sys::wait::WaitStatus::Exited(_, 0))
        ),
        Err(_) => false,
    }
}

/// The server inherits stdin, stdout and stderr only. Offload opens everything close-on-exec,
/// but what started Offload may have left descriptors open without it (a client, a shell): the
/// launcher closes those before the exec, so none reaches the server.
fn close_inherited_descriptors() -> Result<(), SandboxError> {
    const O_CLOEXEC: u64 = 0o2000000;
    let fds: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| SandboxError::Os {
            what: "cannot list open descriptors",
            source: e,
        })?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else {
            continue; // the directory listing's own descriptor, closed since
        };
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u64::from_str_radix(f.trim(), 8).ok())
            .unwrap_or(0);
        if flags & O_CLOEXEC == 0 {
            // Nothing in this single-threaded launcher uses it, and the exec follows.
            nix::unistd::close(fd as std::os::fd::RawFd).map_err(|e| SandboxError::Os {
                what: "cannot close an inherited descriptor",
                source: e.into(),
            })?;
        }
    }
    Ok(())
}

/// Gives this process a network namespace of its own, with loopback up and a relay on `port`
/// to the proxy's unix `socket`; false where no namespace can be made (nothing changed).
fn isolate(port: u16, socket: &Path, user_namespace: &mut bool) -> Result<bool, SandboxError> {
    let root = crate::runs_as_root();
    if !root && !own_user_namespace(user_namespace)? {
        return Ok(false);
    }
    if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).is_err() {
        return Ok(false);
    }
    let os = |what| move |source| SandboxError::Os { what, source };
    loopback_up().map_err(os("cannot bring up loopback in the network namespace"))?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .map_err(os("cannot listen for the proxy in the network namespace"))?;
    relay::start(listener, socket).map_err(os("cannot start the proxy's relay"))?;
    Ok(true)
}

/// `ip link set lo up`, in this process's network namespace.
#[allow(unsafe_code)]
fn loopback_up() -> std::io::Result<()> {
    use nix::libc;
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
    // SAFETY: an `ifreq` is plain data, all zeroes a valid value; the ioctls read and write
    // only it.
    unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *to = *from as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(fd, libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Landlock with `policy`'s grants, `private` (the private folders mounted) written and `own`
/// (the server's own `/proc`) read.
fn landlock(
    policy: &Policy,
    private: &[PathBuf],
    own: &[PathBuf],
    network_namespace: bool,
) -> Result<Confined, SandboxError> {
    let rule_error =
        |e: landlock::RulesetError| SandboxError::Unsupported(format!("Landlock: {e}"));
    let fs_all = AccessFs::from_all(ABI_WANTED);
    let read = AccessFs::from_read(ABI_WANTED);
    let mut ruleset = Ruleset::default()
        // File access is required: a kernel without Landlock fails here.
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .map_err(rule_error)?
        // Newer file rights (refer, truncate, ioctl on devices) where the kernel has them.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(fs_all)
        .map_err(rule_error)?;
    let tcp = AccessNet::BindTcp | AccessNet::ConnectTcp;
    match policy.network {
        Network::All => {}
        // With network off no IP socket can even be made (seccomp); Landlock adds TCP where
        // the kernel has it.
        Network::Off => {
            ruleset = ruleset
                .set_compatibility(CompatLevel::BestEffort)
                .handle_access(tcp)
                .map_err(rule_error)?;
        }
        // In its own network namespace, the relay is all there is: the port rule is a second
        // wall where the kernel has it.
        Network::Proxy { .. } if network_namespace => {
            ruleset = ruleset
                .set_compatibility(CompatLevel::BestEffort)
                .handle_access(tcp)
                .map_err(rule_error)?;
        }
        // Ports are Landlock's alone: without ABI 4 they cannot be enforced.
        Network::Ports(_) | Network::Proxy { .. } => {
            ruleset = ruleset
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(tcp)
                .map_err(|e| {
                    SandboxError::Unsupported(format!(
                        "Landlock cannot limit TCP ports on this kernel (needs Linux 6.7): {e}"
                    ))
                })?;
        }
    }
    ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(rule_error)?;
    let mut created = ruleset.create().map_err(rule_error)?;
    for (paths, access) in [
        (&policy.read, read),
        (&policy.write, fs_all),
        (&private.to_vec(), fs_all),
        (&own.to_vec(), read),
    ] {
        for path in paths {
            let fd = open(path)?;
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(rule_error)?;
        }
    }
    let ports = match &policy.network {
        Network::Ports(ports) => ports.clone(),
        Network::Proxy { port, .. } => vec![*port],
        Network::Off | Network::All => Vec::new(),
    };
    {
        for port in ports {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(rule_error)?;
        }
    }
    let status = created.restrict_self().map_err(rule_error)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::Unsupported(
            "Landlock is not enforced on this kernel".into(),
        ));
    }
    let abi = match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi.map_or(effective_abi as u32, |k| k as u32),
        _ => 0,
    };
    Ok(Confined {
        landlock_abi: abi,
        scoped: abi >= 6,
        processes_limited: false,
        network_namespace,
        read_only_held: false,
        private_folders_held: false,
        process_namespace: false,
    })
}

/// A path to grant, opened without following it into something else: a granted path that does
/// not exist is skipped (a cache not made yet); anything else that cannot be opened is an error.
fn open(path: &Path) -> Result<PathFd, SandboxError> {
    PathFd::new(path)
        .map_err(|e| SandboxError::Invalid(format!("cannot grant {}: {e}", path.display())))
}

/// Syscalls no server needs, refused with EPERM: tracing other processes, reading their
/// memory, io_uring (its operations bypass seccomp); IP sockets when the network is off; unix
/// sockets unless asked for (`socketpair` stays: runtimes use it between their own threads);
/// new processes and programs when the policy says so.
fn seccomp(policy: &Policy) -> Result<(), SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Unsupported(format!("seccomp: {e}")))?;
    let filter_error =
        |e: seccompiler::BackendError| SandboxError::Invalid(format!("seccomp: {e}"));
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        nix::libc::SYS_ptrace,
        nix::libc::SYS_process_vm_readv,
        nix::libc::SYS_process_vm_writev,
        nix::libc::SYS_io_uring_setup,
        nix::libc::SYS_io_uring_enter,
        nix::libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    let mut domains = Vec::new();
    if policy.network == Network::Off {
        domains.extend([nix::libc::AF_INET, nix::libc::AF_INET6]);
    }
    if !policy.unix_sockets {
        domains.push(nix::libc::AF_UNIX);
    }
    if !domains.is_empty() {
        let socket_rules = domains
            .into_iter()
            .map(|domain| {
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, domain as u64)
                    .and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(filter_error)?;
        rules.insert(nix::libc::SYS_socket, socket_rules);
    }
    if policy.no_new_processes {
        // Threads are clones with CLONE_THREAD; a process is any other clone, fork or vfork.
        let thread = nix::libc::CLONE_THREAD as u64;
        let process = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(thread),
            0,
        )
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(filter_error)?;
        rules.insert(nix::libc::SYS_clone, vec![process]);
        #[cfg(target_arch = "x86_64")]
        for call in [nix::libc::SYS_fork, nix::libc::SYS_vfork] {
            rules.insert(call, Vec::new());
        }
        for call in [nix::libc::SYS_execve, nix::libc::SYS_execveat] {
            rules.insert(call, Vec::new());
        }
    }
    install(rules, nix::libc::EPERM, arch)?;
    if policy.no_new_processes {
        // clone3's flags are in memory a filter cannot read: refused as unknown, so the C
        // library makes its threads with clone, which the filter above reads.
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        rules.insert(nix::libc::SYS_clone3, Vec::new());
        install(rules, nix::libc::ENOSYS, arch)?;
    }
    Ok(())
}

/// A filter that answers the calls in `rules` with `errno` and lets every other through.
fn install(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<(), SandboxError> {
    let filter_error =
        |e: seccompiler::BackendError| SandboxError::Invalid(format!("seccomp: {e}"));
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(filter_error)?;
    let program: BpfProgram = filter.try_into().map_err(filter_error)?;
    seccompiler::apply_filter(&program).map_err(|e| SandboxError::Os {
        what: "cannot apply the seccomp filter",
        source: std::io::Error::other(e.to_string()),
    })
}
