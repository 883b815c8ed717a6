"""What the interop client scripts share: one line per check, exit non-zero on the first failure."""

import sys


def check(cond, what):
    if not cond:
        print(f"FAIL {what}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)
