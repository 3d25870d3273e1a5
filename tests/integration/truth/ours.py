"""`unwindkit bt --json` on a core. JSON schema (agreed with the bt command):
{"threads":[{"tid":N,"frames":[{"index":0,"pc":"0x...","cfa":"0x...","module":"path",
"module_offset":"0x...","symbol":"name","symbol_offset":N,"source":"cfi|sframe|fp"}],
"stop_reason":"..."}],"warnings":[...]}"""
import json
import os

from .debuggers import Thread
from .tools import run


def unwindkit():
    path = os.environ.get("UNWINDKIT")
    if not path:
        raise RuntimeError("UNWINDKIT (the built unwindkit binary) is not set")
    return path


def bt_available():
    """Whether this unwindkit has the bt command (written separately from this harness)."""
    if not os.access(unwindkit(), os.X_OK):
        return False
    p = run([unwindkit(), "bt", "--help"], check=False, timeout=30)
    return p.returncode == 0 and "--json" in p.stdout + p.stderr


def our_bt(build, core, timeout=300, extra_args=()):
    """Our frames for every thread of `core`, unwinding with `build`'s files."""
    # deep_recursion has 10,000 frames: lift the default depth limit above any case.
    # After the positionals: the option takes several values and would swallow them.
    search = [f"--solib-search-path={d}" for d in build.search_dirs]
    p = run([unwindkit(), "bt", "--json", "--thread", "all", "--max-depth", "20000", *extra_args,
             core, build.exe, *search],
            timeout=timeout, check=False)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"unwindkit bt exit {p.returncode}, no JSON: {e}\n{p.stdout[-500:]}\n"
                           f"{p.stderr[-1000:]}") from e
    threads = []
    for t in doc.get("threads", []):
        frames = t.get("frames", [])
        threads.append(Thread(int(t["tid"]), [int(f["pc"], 16) for f in frames],
                              [f.get("symbol") or f.get("source", "") for f in frames],
                              t.get("stop_reason", ""),
                              sources=[f.get("source", "") for f in frames]))
    return threads, doc.get("warnings", [])
