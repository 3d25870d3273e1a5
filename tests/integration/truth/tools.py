"""Running external tools with a time limit and readable failures."""
import os
import shutil
import subprocess
import sys
import tempfile


class Skip(Exception):
    """A case that cannot run on this machine; the message says why."""


def run(cmd, cwd=None, timeout=300, check=True, env=None):
    """Runs `cmd` (a list), returns CompletedProcess with text output."""
    try:
        p = subprocess.run(cmd, cwd=cwd, timeout=timeout, env=env, capture_output=True,
                           text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"timed out after {timeout}s: {' '.join(cmd)}") from e
    if check and p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


def side_file_cache(prefix):
    """A temporary folder for a plugin's side-file cache. A session told not to wait leaves a
    detached maker behind that may still write there when the test removes the folder: it is
    removed as far as it can be (a file the maker writes afterwards stays in /tmp), not failed
    on, and not waited for."""
    return tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True)


def need(tool):
    """The tool's path, or Skip naming what is missing."""
    path = shutil.which(tool)
    if not path:
        raise Skip(f"{tool} is not installed")
    return path


def lldb(tool="lldb"):
    """The path of the release's LLDB tool (`lldb`, `lldb-dap`) the tests drive: version
    UNWINDKIT_LLDB_VERSION, which CMake sets from releases.tsv (a test registered for a
    release's other LLDB gets that one's), or Skip."""
    return need(f"{tool}-{os.environ.get('UNWINDKIT_LLDB_VERSION', '22')}")


def llvm(tool):
    """The name of the release's LLVM tool (`clang`, `llvm-objdump`, `ld64.lld`, ...): version
    UNWINDKIT_LLVM_VERSION, which CMake sets from releases.tsv."""
    return f"{tool}-{os.environ['UNWINDKIT_LLVM_VERSION']}"


def python():
    """The Python the release's GDB embeds (UNWINDKIT_PYTHON, set by CMake): LLDB's module
    for the SB-API scripts is built for it too."""
    return os.environ.get("UNWINDKIT_PYTHON", sys.executable)


# CTest's SKIP_RETURN_CODE for every integration test (tests/integration/CMakeLists.txt).
SKIP_EXIT = 77


def exit_with(main):
    """Exits with a test script's `main()` status: SKIP_EXIT for a Skip (its reason printed),
    which CTest counts as skipped, never as passed; 1 when a tool it waits for runs out of
    time."""
    try:
        sys.exit(main())
    except Skip as e:
        print(f"SKIP: {e}")
        sys.exit(SKIP_EXIT)
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: timed out: {e}")
        sys.exit(1)
