"""Secrets never reach the log, the records, the audit log or the window."""



from harness import SECRET


def secrets_never_shown(run):
    """Secrets never reach the log, the records, the audit log or the window."""
    config, home, log, wd = run.config, run.home, run.log, run.wd
    page = wd.s("GET", "/source")
    for where, text in (("window", page), ("config.json", config.read_text()),
                        ("offload.log", log.read_text()),
                        ("audit log", (home / ".local/share/offload/audit.jsonl").read_text()),
                        ("records", (home / ".local/share/offload/records.jsonl").read_text())):
        assert SECRET not in text, f"the secret is in the {where}"
    print("the secret is nowhere but the keychain and the server")
