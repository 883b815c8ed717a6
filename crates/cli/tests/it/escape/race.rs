//! The check-then-use race: a file in the root swapped for a link to the outside file while the
//! tools read it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use offload_testkit::{call, text};
use serde_json::json;

use super::{SECRET, corpus};

/// A file inside the root swapped for a symlink to the outside file, back and forth, while the
/// tools read it: every answer is the inside file or a refusal, never the outside content.
#[cfg(unix)]
#[tokio::test]
async fn a_symlink_swapped_in_between_check_and_use_never_leaks() {
    let c = corpus();
    let target = c.ctx.root.join("swapped.txt");
    std::fs::write(&target, "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapped = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let swapper = {
        let stop = stop.clone();
        let swapped = swapped.clone();
        let target = target.clone();
        let secret = c.outside.join("secret.txt");
        let staged_link = c.ctx.root.join(".staged-link");
        let staged_file = c.ctx.root.join(".staged-file");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&staged_link);
                std::os::unix::fs::symlink(&secret, &staged_link).unwrap();
                std::fs::rename(&staged_link, &target).unwrap();
                std::fs::write(&staged_file, "inside").unwrap();
                std::fs::rename(&staged_file, &target).unwrap();
                swaps += 1;
                swapped.store(swaps, Ordering::Relaxed);
            }
            swaps
        })
    };
    let client = c.ctx.client().await;
    let path = target.display().to_string();
    let mut leaks = Vec::new();
    let mut answered = 0;
    // At least 300 reads, and on until the swapper has had its turn (on a busy machine the thread
    // may get little time): a race that did not run proves nothing.
    let mut i = 0;
    while i < 300 || (swapped.load(Ordering::Relaxed) <= 100 && i < 5000) {
        i += 1;
        let (tool, args) = match i % 3 {
            0 => ("read_file", json!({"path": path})),
            1 => ("summarize_file", json!({"path": path})),
            _ => (
                "call_tool",
                json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": path}}}),
            ),
        };
        let r = call(&client, tool, args).await;
        if text(&r).contains(SECRET) {
            leaks.push(format!("{tool}: {}", text(&r)));
        }
        if r.is_error != Some(true) {
            answered += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(leaks.is_empty(), "{leaks:?}");
    assert!(swaps > 100, "the race ran ({swaps} swaps in {i} reads)");
    eprintln!(
        "symlink race: {i} reads during {swaps} swaps, {answered} answered with the inside file, 0 leaks"
    );
    client.cancel().await.unwrap();
}
