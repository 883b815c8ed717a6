//! The policy a server's entry and Offload's settings give: grants, denials, the network.

use super::*;

/// Server `fx` with `sandbox`, `program` and `args`, no environment, cwd or PATH.
fn server<'a>(sandbox: &'a SandboxPolicy, program: &'a Path, args: &'a [String]) -> Server<'a> {
    Server {
        name: "fx",
        sandbox,
        program,
        args,
        env_values: &[],
        cwd: None,
        path_var: std::ffi::OsStr::new(""),
        egress: None,
    }
}

fn setting(dir: &Path) -> Setting {
    Setting {
        launcher: Some(PathBuf::from("/usr/bin/offload")),
        roots: vec![(dir.join("home"), false), (dir.join("ro"), true)],
        state_root: dir.join("home/.local/share/offload/servers"),
        own: vec![
            dir.join("home/.local/share/offload"),
            dir.join("home/.config/offload"),
        ],
        home: Some(dir.join("home")),
    }
}

#[test]
fn a_root_that_holds_secrets_is_granted_around_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for d in [
        "projects/app",
        ".ssh",
        ".config/offload",
        ".config/nvim",
        ".local/share/offload/files",
        "ro",
    ] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("ro")).unwrap();
    std::fs::write(home.join(".bashrc"), "").unwrap();
    std::fs::write(home.join("notes.txt"), "").unwrap();
    let launch = launch(
        server(
            &SandboxPolicy::default(),
            Path::new("/usr/bin/python3"),
            &[],
        ),
        &setting(dir.path()),
    )
    .unwrap();
    let write = &launch.policy.write;
    assert!(write.contains(&home.join("projects")), "{write:?}");
    assert!(write.contains(&home.join("notes.txt")) && write.contains(&home.join(".config/nvim")));
    for secret in [".ssh", ".bashrc", ".config/offload", ".local/share/offload"] {
        assert!(
            !write
                .iter()
                .chain(&launch.policy.read)
                .any(|g| home.join(secret).starts_with(g)),
            "{secret} is reachable: {write:?}"
        );
    }
    // Its own state directory, inside Offload's data, is its own.
    assert!(write.contains(&home.join(".local/share/offload/servers/fx")));
    assert!(launch.policy.read.contains(&dir.path().join("ro")));
    assert_eq!(launch.policy.network, Network::Off);
}

#[test]
fn named_in_read_a_denied_place_is_granted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home/.ssh")).unwrap();
    let ssh = dir.path().join("home/.ssh").display().to_string();
    let sandbox = SandboxPolicy {
        read: vec![ssh.clone()],
        ..Default::default()
    };
    let launch = launch(
        server(&sandbox, Path::new("/usr/bin/git"), &[]),
        &setting(dir.path()),
    )
    .unwrap();
    assert!(launch.policy.read.contains(&PathBuf::from(ssh)));
}

#[test]
fn paths_the_entry_names_are_granted_and_the_runtime_around_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(dir.path().join("node/bin")).unwrap();
    std::fs::write(dir.path().join("node/bin/node"), "").unwrap();
    let args = vec![
        format!("--db={}", data.join("new.sqlite").display()),
        "-y".into(),
    ];
    let launch = launch(
        server(
            &SandboxPolicy::default(),
            &dir.path().join("node/bin/node"),
            &args,
        ),
        &setting(dir.path()),
    )
    .unwrap();
    // A file to make in a folder not granted: the folder is the server's own, privately.
    assert!(
        !launch.policy.write.contains(&data),
        "{:?}",
        launch.policy.write
    );
    let private = dir
        .path()
        .join("home/.local/share/offload/servers/fx/beside")
        .join(beside::private_name(&data));
    assert_eq!(
        launch.policy.private_folders,
        [offload_sandbox::PrivateFolder {
            folder: data.clone(),
            private: private.clone()
        }]
    );
    assert_eq!(
        launch.saved,
        [beside::Saved {
            file: data.join("new.sqlite"),
            copy: private.join("new.sqlite")
        }]
    );
    assert!(launch.policy.read.contains(&dir.path().join("node")));
}

/// A file named in the home folder (server-memory's `MEMORY_FILE_PATH=~/memory.jsonl`, a
/// SQLite `--db-path ~/test.db`): the file is written, the home folder is neither read nor
/// written, and the server saves beside the file through a private folder. Named in a folder
/// the server may write already (a root), nothing private is needed.
#[test]
fn a_file_named_in_the_home_folder_is_saved_without_the_home_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("memory.jsonl"), "").unwrap();
    let mut setting = setting(dir.path());
    setting.roots = vec![(dir.path().join("root"), false)];
    std::fs::create_dir_all(dir.path().join("root")).unwrap();
    std::fs::write(dir.path().join("root/in-root.db"), "").unwrap();
    let args = vec![
        home.join("memory.jsonl").display().to_string(),
        format!("--db-path={}", home.join("test.db").display()),
        dir.path().join("root/in-root.db").display().to_string(),
    ];
    let launch = launch(
        server(&SandboxPolicy::default(), Path::new("/usr/bin/env"), &args),
        &setting,
    )
    .unwrap();
    let (read, write) = (&launch.policy.read, &launch.policy.write);
    assert!(write.contains(&home.join("memory.jsonl")), "{write:?}");
    for grants in [read, write] {
        assert!(!grants.contains(&home), "{grants:?}");
    }
    assert_eq!(launch.policy.private_folders.len(), 1);
    assert_eq!(launch.policy.private_folders[0].folder, home);
    let saved: Vec<&Path> = launch.saved.iter().map(|s| s.file.as_path()).collect();
    assert_eq!(saved, [home.join("memory.jsonl"), home.join("test.db")]);

    // A credential named the same way (`KUBECONFIG=~/.kube/config`) is neither granted nor
    // linked into a private folder, where the server would read it; named in `read`, it is.
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    std::fs::write(home.join(".kube/config"), "token").unwrap();
    let args = vec![home.join(".kube/config").display().to_string()];
    let launch_with = |sandbox: &SandboxPolicy| {
        super::launch(server(sandbox, Path::new("/usr/bin/env"), &args), &setting).unwrap()
    };
    let bare = launch_with(&SandboxPolicy::default());
    assert!(bare.saved.is_empty() && bare.policy.private_folders.is_empty());
    for grants in [&bare.policy.read, &bare.policy.write] {
        assert!(
            !grants
                .iter()
                .any(|g| home.join(".kube/config").starts_with(g)),
            "{grants:?}"
        );
    }
    let named = launch_with(&SandboxPolicy {
        read: vec![home.join(".kube/config").display().to_string()],
        ..SandboxPolicy::default()
    });
    assert!(
        named
            .policy
            .read
            .iter()
            .chain(&named.policy.write)
            .any(|g| home.join(".kube/config").starts_with(g))
    );
}

#[test]
fn a_package_runner_reaches_its_registries_through_its_proxy_unless_its_entry_says_otherwise() {
    let npx = Path::new("/usr/bin/npx");
    let default = SandboxPolicy::default();
    // This machine holds a server to its proxy (a network namespace, or Landlock's ports).
    assert_eq!(
        allow_list(&default, npx).unwrap(),
        Some(Allow::registries())
    );
    assert_eq!(
        allow_list(&default, Path::new("/usr/bin/node")).unwrap(),
        None
    );
    let off = SandboxPolicy {
        network: Some(SandboxNetwork::Off),
        ..Default::default()
    };
    assert_eq!(allow_list(&off, npx).unwrap(), None);
    // With an allow-list of its own, a runner still reaches its registries (it installs the
    // server first); another program reaches the list alone.
    let local = SandboxPolicy {
        network: Some(SandboxNetwork::Allow(vec!["127.0.0.1:18765".into()])),
        ..Default::default()
    };
    let uvx = allow_list(&local, Path::new("/usr/bin/uvx"))
        .unwrap()
        .unwrap();
    assert!(uvx.permits("127.0.0.1", 18765) && uvx.permits("files.pythonhosted.org", 443));
    let node = allow_list(&local, Path::new("/usr/bin/node"))
        .unwrap()
        .unwrap();
    assert!(node.permits("127.0.0.1", 18765) && !node.permits("registry.npmjs.org", 443));
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        launch(server(&off, npx, &[]), &setting(dir.path()))
            .unwrap()
            .policy
            .network,
        Network::Off
    );
    // Where no proxy can hold it, a runner gets the network rather than no registry.
    assert_eq!(network_of(None, npx, None).unwrap(), Network::All);
    assert_eq!(
        network_of(None, Path::new("/usr/bin/node"), None).unwrap(),
        Network::Off
    );
}

#[tokio::test]
async fn an_allow_list_goes_through_the_servers_proxy_and_its_entry_is_checked() {
    let list = SandboxPolicy {
        network: Some(SandboxNetwork::Allow(vec!["api.github.com".into()])),
        ..Default::default()
    };
    let node = Path::new("/usr/bin/node");
    let allow = allow_list(&list, node).unwrap().unwrap();
    assert!(allow.permits("api.github.com", 443));
    let egress = super::super::egress::start("fx", allow, Default::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let launch = launch(
        Server {
            egress: Some(&egress),
            ..server(&list, node, &[])
        },
        &setting(dir.path()),
    )
    .unwrap();
    assert_eq!(
        launch.policy.network,
        Network::Proxy {
            port: egress.port,
            socket: egress.socket.clone()
        }
    );
    let cmd = command(&launch, node, &[], &[]).unwrap();
    let env: std::collections::HashMap<_, _> = cmd
        .as_std()
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    let proxy = format!("http://127.0.0.1:{}", egress.port);
    assert_eq!(env.get("HTTPS_PROXY"), Some(&proxy));
    assert_eq!(env.get("http_proxy"), Some(&proxy));
    assert_eq!(env.get("NODE_USE_ENV_PROXY").map(String::as_str), Some("1"));
    // Without its proxy, an allow-list does not start; a wrong entry says what to write.
    assert!(network_of(list.network.as_ref(), node, None).is_err());
    let wrong = SandboxPolicy {
        network: Some(SandboxNetwork::Allow(vec!["host:http".into()])),
        ..Default::default()
    };
    assert!(allow_list(&wrong, node).unwrap_err().contains("host:port"));
}

#[test]
fn without_a_launcher_a_confined_server_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting {
        launcher: None,
        ..setting(dir.path())
    };
    let e = launch(
        server(
            &SandboxPolicy::default(),
            Path::new("/usr/bin/python3"),
            &[],
        ),
        &setting,
    )
    .unwrap_err();
    assert!(e.contains("sandbox\": \"off\""), "{e}");
}

#[test]
fn limits_default_to_half_the_memory_and_1024_processes_and_the_entry_sets_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let python = Path::new("/usr/bin/python3");
    let default = launch(
        server(&SandboxPolicy::default(), python, &[]),
        &setting(dir.path()),
    )
    .unwrap();
    let half = offload_sandbox::physical_memory().map(|m| m / 2);
    assert!(half.is_some_and(|h| h > 0));
    assert_eq!(default.policy.limits.memory, half);
    assert_eq!(default.policy.limits.processes, Some(1024));
    let entry: SandboxPolicy =
        serde_json::from_value(serde_json::json!({"memory_mb": 512, "processes": 64})).unwrap();
    let own = launch(server(&entry, python, &[]), &setting(dir.path())).unwrap();
    assert_eq!(own.policy.limits.memory, Some(512 << 20));
    assert_eq!(own.policy.limits.processes, Some(64));
    let wrong = serde_json::from_value::<SandboxPolicy>(serde_json::json!({"memory": "4GB"}));
    assert!(wrong.unwrap_err().to_string().contains("memory_mb"));
}

#[test]
fn a_repository_the_server_may_write_keeps_its_hooks_and_config_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("home/project");
    std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    std::fs::write(repo.join(".git/config"), "[core]").unwrap();
    let args = vec![repo.display().to_string()];
    let launch = launch(
        server(&SandboxPolicy::default(), Path::new("/usr/bin/node"), &args),
        &setting(dir.path()),
    )
    .unwrap();
    assert!(
        launch.policy.write.contains(&repo),
        "{:?}",
        launch.policy.write
    );
    assert_eq!(
        launch.policy.read_only,
        [repo.join(".git/hooks"), repo.join(".git/config")]
    );
}

/// The user named a program's file (a browser's binary, the server's own script): it is read,
/// and neither it nor its folder is written — a server cannot rewrite code that runs later, nor
/// anything under a system folder. A data file named beside it is still written.
#[test]
fn a_named_program_is_read_and_never_written_with_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("proj/node_modules/@scope/server/dist");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("cli.js"), "console.log(1)").unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("db.sqlite"), "").unwrap();
    let args = vec![
        package.join("cli.js").display().to_string(),
        "--executable-path".into(),
        "/usr/bin/env".into(),
        format!("--db={}", data.join("db.sqlite").display()),
    ];
    let launch = launch(
        server(&SandboxPolicy::default(), Path::new("/usr/bin/node"), &args),
        &setting(dir.path()),
    )
    .unwrap();
    let (read, write) = (&launch.policy.read, &launch.policy.write);
    for program in [package.join("cli.js"), PathBuf::from("/usr/bin/env")] {
        assert!(
            !write.iter().any(|w| program.starts_with(w)),
            "{} writable: {write:?}",
            program.display()
        );
        assert!(read.iter().any(|r| program.starts_with(r)), "{read:?}");
    }
    // Its project is read (where Node finds its packages).
    assert!(read.contains(&dir.path().join("proj")), "{read:?}");
    // The control: a data file named the same way is written, and saved beside itself
    // through a private folder, not with its folder's other contents.
    assert!(
        !write.contains(&data) && write.contains(&data.join("db.sqlite")),
        "{write:?}"
    );
    assert_eq!(launch.policy.private_folders[0].folder, data);
}

/// A server installed in a project's `node_modules` and started by its `.bin` link or by the
/// package's script as the command: the project is read, so its dependencies one level up load.
#[test]
fn a_locally_installed_package_reads_its_project() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    let script = proj.join("node_modules/some-server/dist/index.js");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::create_dir_all(proj.join("node_modules/.bin")).unwrap();
    std::fs::create_dir_all(proj.join("node_modules/dependency")).unwrap();
    std::fs::write(&script, "#!/usr/bin/env node\n").unwrap();
    let bin = proj.join("node_modules/.bin/some-server");
    std::os::unix::fs::symlink("../some-server/dist/index.js", &bin).unwrap();
    for program in [&bin, &script] {
        let launch = launch(
            server(&SandboxPolicy::default(), program, &[]),
            &setting(dir.path()),
        )
        .unwrap();
        let read = &launch.policy.read;
        assert!(
            read.iter()
                .any(|r| proj.join("node_modules/dependency").starts_with(r)),
            "{}: {read:?}",
            program.display()
        );
        assert!(
            !launch.policy.write.iter().any(|w| script.starts_with(w)),
            "{:?}",
            launch.policy.write
        );
    }
}
