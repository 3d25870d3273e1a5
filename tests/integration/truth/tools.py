"""Running external tools with a time limit and readable failures."""
import shutil
import subprocess


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


def need(tool):
    """The tool's path, or Skip naming what is missing."""
    path = shutil.which(tool)
    if not path:
        raise Skip(f"{tool} is not installed")
    return path
